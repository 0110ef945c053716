"""The rules every wire format's assembler shares.

Each assembler (``ollama.py``, ``openai.py``, ``anthropic.py``) folds a reply's chunks, one
at a time, into a :class:`~labkit.harness.contracts.Turn`: the assistant message to keep
(in the provider's own shape), its text, and the tool calls the loop may run, which are
none unless the turn is well formed and finished cleanly. The rules they share: a chunk
that breaks its format raises :class:`Malformed` inside the assembler, which keeps the
first such problem and ignores the rest of the stream (:class:`ChunkAssembler`); a call's
arguments, when they stream as pieces of JSON text, are parsed only once the turn is
complete and must then be a JSON object nested at most :data:`MAX_ARGUMENT_DEPTH` levels
(:func:`parse_arguments`).
"""

from __future__ import annotations

import json

from ..contracts import Turn
from ..frozen import TooDeep, freeze
from ..words import json_kind

#: Levels of nesting a tool call may have, its arguments included (the course's tools take
#: flat objects; a real model's calls are a few levels deep at most).
MAX_ARGUMENT_DEPTH = 32


class Malformed(ValueError):
    """A chunk that breaks its wire format; the message says how."""


class ChunkAssembler:
    """What every assembler shares: each chunk is counted and folded in by ``_fold`` (the
    format's own), and the first one that breaks the format is kept as the ``problem``;
    everything after it is ignored. ``add`` returns the text the chunk carried, for the
    loop's ``text_delta`` events."""

    unit = "chunk"  # how a problem names a piece of the stream

    def __init__(self) -> None:
        self.problem: str | None = None
        self.chunks = 0

    def add(self, chunk: object) -> str:
        """Fold one chunk in; return the text it carried ('' if none)."""
        self.chunks += 1
        return self._checked_add(chunk) if self.problem is None else ""

    def _checked_add(self, chunk: object) -> str:
        """Fold a counted chunk in by the format's every rule (``_fold``)."""
        try:
            return self._fold(chunk)
        except Malformed as exc:
            self.problem = f"{self.unit} {self.chunks}: {exc}"
            return ""

    def _fold(self, chunk: object) -> str:
        raise NotImplementedError

    def turn(self) -> Turn:
        raise NotImplementedError


def need(condition: object, message: str) -> None:
    """Raise :class:`Malformed` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise Malformed(message)


def frozen_arguments(value: dict, what: str) -> dict:
    """``value`` read-only, or :class:`Malformed` saying ``what`` (e.g. ``"the input of
    block 1 is"``) then how deeply it nests, if that is too deep."""
    try:
        return freeze(value, MAX_ARGUMENT_DEPTH)
    except TooDeep as exc:
        raise Malformed(f"{what} {exc}") from None


def parse_arguments(text: str, what: str) -> dict:
    """The arguments of a complete call, from their joined JSON text, read-only.

    Raises :class:`Malformed` naming ``what`` (e.g. ``tool call 0 ('read_file')``) when the
    text is not JSON, is not an object, or nests too deeply.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise Malformed(f"the arguments of {what} nest too deeply") from None
    except ValueError as exc:
        raise Malformed(f"the arguments of {what} are not JSON ({exc}): {text[:80]!r}") from None
    need(isinstance(value, dict), f"the arguments of {what} are {kind(value)}, not a JSON object")
    return frozen_arguments(value, f"the arguments of {what} are")


def kind(value: object) -> str:
    """A JSON value's kind in a few words, for saying what it should have been (a value the
    chunk does not hold is "missing or null": chunks are read with ``.get``)."""
    return json_kind(value, none="missing or null")
