"""What the loop reads of an assembled turn, whatever wire format it streamed in.

Ollama's turn (``turns.py``) has more to say, so it is its own class; the formats whose
tool calls arrive in fragments (``openai_format.py``, ``anthropic_format.py``) build an
:class:`AssembledTurn`. Both offer the loop the same five things: ``problem``,
``unfinished``, ``message``, ``text`` and ``calls``.

Their assemblers share two small rules, kept here: a chunk that breaks the format
raises :class:`Malformed` inside the assembler (which records the first one and ignores
the rest of the stream), and a call's arguments, streamed as pieces of JSON text, are
parsed only once the turn is complete, and must then be a JSON object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .frozen import TooDeep, freeze

#: Levels of nesting a tool call's arguments may have (the course's tools take flat objects).
MAX_ARGUMENT_DEPTH = 32


@dataclass(frozen=True)
class AssembledTurn:
    """One complete or broken reply, as the loop judges it.

    ``message`` is the assistant message to keep, in the provider's own shape (read-only).
    ``calls`` holds :class:`ToolCall` objects only when the turn finished cleanly and is
    well formed; otherwise it is empty and ``unfinished`` or ``problem`` says why.
    ``finish`` is the reason the stream gave for ending (``"tool_calls"``, ``"length"``,
    ``"end_turn"``, ``"max_tokens"``...), or None when it has not ended.
    """

    message: dict
    text: str
    calls: list
    problem: str | None
    unfinished: str | None
    finish: str | None
    chunks: int = 0


class Malformed(ValueError):
    """A chunk that breaks its wire format; the message says how."""


class FragmentAssembler:
    """What the assemblers of OpenAI's and Anthropic's streams share: each chunk is counted and
    folded in by ``_fold`` (the format's own), and the first one that breaks the format is
    recorded as the ``problem``; everything after it is ignored."""

    unit = "chunk"  # how a problem names a piece of the stream

    def __init__(self):
        self.problem = None
        self.chunks = 0

    def add(self, chunk) -> str:
        """Fold one chunk in; return the text it carried ('' if none)."""
        self.chunks += 1
        if self.problem is None:
            try:
                return self._fold(chunk)
            except Malformed as exc:
                self.problem = f"{self.unit} {self.chunks}: {exc}"
        return ""

    def _fold(self, chunk) -> str:
        raise NotImplementedError


def need(condition, message: str) -> None:
    """Raise :class:`Malformed` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise Malformed(message)


def parse_arguments(text: str, what: str):
    """The arguments of a complete call, from their joined JSON text, read-only.

    Raises :class:`Malformed` naming ``what`` (e.g. ``tool call 0 (read_file)``) when
    the text is not JSON, is not an object, or nests too deeply.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise Malformed(f"the arguments of {what} nest too deeply") from None
    except ValueError as exc:
        raise Malformed(f"the arguments of {what} are not JSON ({exc}): {text[:80]!r}") from None
    need(isinstance(value, dict), f"the arguments of {what} are {kind(value)}, not a JSON object")
    try:
        return freeze(value, MAX_ARGUMENT_DEPTH)
    except TooDeep as exc:
        raise Malformed(f"the arguments of {what} are {exc}") from None


def kind(value) -> str:
    """A JSON value's kind in a few words, for saying what it should have been."""
    if value is None:
        return "null"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), f"a {type(value).__name__}")
