"""The context budget: cut long tool output, compact old results, before each request.

Every request carries the whole conversation, so what a tool returned three turns ago
is paid for again on each request (``conversation.py`` measures where the characters
go). Besides reading a slice of a file (``read_file``'s ``offset`` and ``limit``, in
``tools.py``), lesson 08 keeps a conversation in budget two ways, both pure functions:
``head_and_tail`` (cut the middle of a long output, saying how much) and ``compact``
(replace old tool results with a short note, every message kept in its place).
``Budget`` is the small callable the loop's ``budget=`` hook takes: ``compact`` applied
before each request, with a log of what it did.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from .contracts import Message, WireFormat
from .conversation import measure
from .formats import named

#: What a cut leaves in the text. ``CUT`` matches any marker, so a second cut can keep
#: an earlier marker whole or drop it whole, never split it.
MARKER = "\n[labkit: {count} {unit} cut]\n"
CUT = re.compile(r"\n\[labkit: \d+ (?:characters|bytes) cut\]\n")
#: What a compacted tool result says instead of its content.
COMPACTED_NOTE = (
    "compacted: this {name} result ({size} characters) was dropped to keep the "
    "conversation in budget; call the tool again if you need it"
)
COMPACTED = re.compile(r'\{"note": "compacted: ')


def marker(count: int, unit: str = "characters") -> str:
    """The text that stands for ``count`` characters (or bytes) cut from the middle."""
    return MARKER.format(count=count, unit=unit)


def head_and_tail(text: str, limit: int) -> str:
    """``text`` itself if it has at most ``limit`` characters; otherwise its first and last
    characters around a marker saying how many were cut, ``limit`` characters at most.

    The marker is never split: the cut grows to swallow any marker it would cut into.
    Takes time in proportion to ``limit``, however long ``text`` is.
    """
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if len(text) <= limit:
        return text
    room = limit - len(marker(len(text)))  # the widest marker this cut can need
    if room < 2:
        raise ValueError(
            f"limit {limit} is too small: the marker alone takes "
            f"{len(marker(len(text)))} characters"
        )
    start, end = room - room // 2, len(text) - room // 2  # keep text[:start] and text[end:]
    # move each end out of a marker it falls inside (a marker is under 60 characters, so
    # only the text around each end is searched: the cost is the length kept, not the input)
    for found in CUT.finditer(text, max(start - 60, 0), start + 60):
        if found.start() < start < found.end():
            start = found.start()
    for found in CUT.finditer(text, max(end - 60, 0), end + 60):
        if found.start() < end < found.end():
            end = found.end()
    return text[:start] + marker(end - start) + text[end:]


def compact(
    messages: Iterable[Message],
    budget: int,
    *,
    keep_last: int = 1,
    wire_format: str | WireFormat = "ollama",
) -> list[Message]:
    """A copy of ``messages`` whose old tool results are replaced by a short note, oldest
    first, until the conversation has at most ``budget`` characters (``measure``'s total).

    Only the content of tool results changes: every message stays where it was, with its
    role, name and ids, so each result still follows the call that asked for it. The
    results of the last ``keep_last`` assistant turns are kept whole, and so are the
    system prompt, the task and every assistant message. If that is still over budget,
    the copy is as small as those rules allow; ``measure`` it to see. ``wire_format``
    says where the messages keep their results (Anthropic's: blocks of a user message).
    """
    budget = whole_number(budget, "budget", 0)
    keep_last = whole_number(keep_last, "keep_last", 0)
    wire = named(wire_format)
    compacted = copy.deepcopy(list(messages))
    turns = [i for i, message in enumerate(compacted) if message.get("role") == wire.reply_role]
    if keep_last == 0:
        protected_from = len(compacted)
    elif keep_last > len(turns):
        protected_from = 0
    else:
        protected_from = turns[-keep_last]
    total = measure(compacted, wire)["total"]
    names: dict = {}  # call id -> the tool's name, for the note
    for index, message in enumerate(compacted[:protected_from]):
        names.update((call.id, call.name) for call in wire.calls_in(message))
        if total <= budget:
            break
        results = wire.results_in(message)
        contents = [result.content for result in results]
        for position, result in enumerate(results):
            if total <= budget or COMPACTED.match(result.content):
                continue
            name = result.name or names.get(result.call_id) or "tool"
            note = json.dumps({"note": COMPACTED_NOTE.format(name=name, size=len(result.content))})
            if len(note) < len(result.content):
                contents[position] = note
                total -= len(result.content) - len(note)
        if contents != [result.content for result in results]:
            compacted[index] = wire.with_results(message, contents)
    return compacted


def whole_number(value: object, name: str, least: int) -> int:
    """``value`` if it is an int of at least ``least`` (``True`` is not an int here), else a
    ``ValueError`` that names the argument and says what it must be."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an int of at least {least}, not {value!r}")
    return value


class Budget:
    """The loop's ``budget=`` hook: before each request, once the conversation has more
    than ``max_chars`` characters, replace old tool results with notes (``compact``),
    keeping the results of the last ``keep_last`` turns whole.

    ``wire_format`` is the format of the conversations it will keep (the chat's: Ollama's
    unless it says otherwise); the loop refuses a budget of another format. ``log`` holds
    one row per request: its size before and after, and how many results it replaced then.
    It counts the requests of one run: make one ``Budget`` per run.
    """

    def __init__(
        self, max_chars: int, *, keep_last: int = 1, wire_format: str | WireFormat = "ollama"
    ) -> None:
        self.max_chars = whole_number(max_chars, "max_chars", 1)
        self.keep_last = whole_number(keep_last, "keep_last", 0)
        self.wire_format = named(wire_format).name
        self.log: list[dict[str, Any]] = []

    def __call__(self, messages: Sequence[Message]) -> list[Message]:
        messages, wire = list(messages), named(self.wire_format)
        before = measure(messages, wire)["total"]
        kept = (
            compact(messages, self.max_chars, keep_last=self.keep_last, wire_format=wire)
            if before > self.max_chars
            else messages
        )
        replaced = sum(
            old.content != new.content
            for earlier, later in zip(messages, kept)
            for old, new in zip(wire.results_in(earlier), wire.results_in(later))
        )
        self.log.append(
            {
                "request": len(self.log) + 1,
                "before": before,
                "after": measure(kept, wire)["total"],
                "replaced": replaced,
            }
        )
        return kept

    def __repr__(self) -> str:
        shown = "" if self.wire_format == "ollama" else f", wire_format={self.wire_format!r}"
        return f"Budget({self.max_chars}, keep_last={self.keep_last}{shown})"
