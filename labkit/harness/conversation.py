"""The conversation as data: what it carries, and whether a model can still be sent it.

Every request carries the whole conversation, so these pure functions are where lesson 08
starts: ``measure`` counts a conversation's characters per kind of message,
``request_sizes`` does it for each request of a recording (with the prompt tokens the
server counted), and ``order_problems`` says what, if anything, breaks the rules a
provider enforces on a conversation (each tool result after the call it answers).
Lesson 09 adds what the tools' schemas cost on every request: ``schema_sizes``. The
budget (``budget.py``) counts with ``measure``, and what its ``compact`` leaves must be a
conversation in which ``order_problems`` finds nothing.

Each wire format keeps text, calls and results in places of its own (Anthropic's in
content blocks), so each function takes the format (``wire_format``, a name or a
:class:`~labkit.harness.contracts.WireFormat`; Ollama's by default) and asks it
(``sizes``, ``calls_in``, ``results_in``) rather than knowing any message's shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .contracts import Message, WireFormat
from .formats import named

KINDS = ("system", "user", "assistant", "thinking", "tool_calls", "tool")
SHOWN_IDS = 5  # call ids a problem lists at most


def measure(messages: Iterable[Message], wire_format: str | WireFormat = "ollama") -> dict:
    """Characters per message kind: the text each role carries, the model's thinking and
    tool calls (both are sent back with its messages), and the tool results; and the total."""
    wire = named(wire_format)
    sizes = dict.fromkeys(KINDS, 0)
    for message in messages:
        for kind, size in wire.sizes(message).items():
            sizes[kind] = sizes.get(kind, 0) + size
    sizes["total"] = sum(sizes.values())
    return sizes


def schema_bytes(schema: dict[str, Any]) -> int:
    """The bytes one tool schema adds to every request's body: its JSON as the SDKs send
    it (compact, UTF-8), and the comma that separates it from the next."""
    return len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode()) + 1


def schema_sizes(schemas: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per tool: its name, the bytes its schema adds to each request, and how many
    of those are its description (the sentences the model reads about it)."""
    return [
        {
            "name": schema["function"]["name"],
            "bytes": schema_bytes(schema),
            "description": len(schema["function"].get("description", "").encode()),
        }
        for schema in schemas
    ]


def request_sizes(recording: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per recorded request: its characters per kind (in the recording's wire
    format), and the prompt tokens the server counted (``prompt_eval_count`` of Ollama's
    final chunk), or None where it did not."""
    wire = recording.get("wire_format", "ollama")
    rows = []
    for number, turn in enumerate(recording["turns"], start=1):
        final = turn["chunks"][-1]["chunk"] if turn["chunks"] else {}
        rows.append(
            {
                "request": number,
                **measure(turn["request"]["messages"], wire),
                "prompt_tokens": final.get("prompt_eval_count")
                if isinstance(final, dict)
                else None,
            }
        )
    return rows


def order_problems(
    messages: Sequence[Message], wire_format: str | WireFormat = "ollama"
) -> list[str]:
    """What makes ``messages`` a conversation a model cannot be sent; empty if none.

    It must open with the system prompt and the user's task; each tool result must follow
    the assistant message that called it (or that message's other results), and each
    assistant message gets exactly one result per call it made. A result that names a call
    id must name one of its turn's calls, not yet answered; one that does not (Ollama's)
    answers the next call in order, so its tool name must be that call's. Linear in the
    number of messages and calls.
    """
    wire = named(wire_format)
    problems: list[str] = []
    roles = [message.get("role") for message in messages[:2]]
    if roles != ["system", "user"]:
        problems.append(f"the conversation must start with system and user, not {roles}")
    turn: _Turn | None = None
    for index, message in enumerate(messages):
        results = wire.results_in(message)
        if message.get("role") == wire.reply_role:
            if turn is not None:
                problems.extend(turn.unanswered())
            turn = _Turn(index, wire.calls_in(message), problems)
        elif results:
            for result in results:
                if turn is None:
                    problems.append(f"message {index}: a tool result with no call left to answer")
                else:
                    turn.answer(index, result)
        else:
            if turn is not None:
                problems.extend(turn.unanswered())
            turn = None
    if turn is not None:
        problems.extend(turn.unanswered())
    return problems


class _Turn:
    """One assistant message's calls, and which of them the results so far answered."""

    def __init__(self, index: int, calls: list, problems: list[str]) -> None:
        self.index, self.calls, self.problems = index, calls, problems
        self.answered = [False] * len(calls)
        self.count = 0  # results that answered a call
        self.next = 0  # the first call, in order, not answered yet
        self.by_id: dict = {}
        self.shown: str | None = None  # the ids a problem lists, sorted once
        for position, call in enumerate(calls):
            if call.id is not None:
                if call.id in self.by_id:
                    problems.append(f"message {index}: two calls share the id {call.id!r}")
                self.by_id.setdefault(call.id, position)

    def answer(self, index: int, result) -> None:
        if self.count == len(self.calls):
            self.problems.append(f"message {index}: a tool result with no call left to answer")
            return
        if result.call_id is not None:
            position = self.by_id.get(result.call_id)
            if position is None:
                self.problems.append(
                    f"message {index}: tool_call_id {result.call_id!r} pairs with no call "
                    f"of its turn ({self.listed_ids()})"
                )
                self.count += 1  # it takes a call's place: the count says what is missing
                return
            if self.answered[position]:
                self.problems.append(
                    f"message {index}: call {result.call_id!r} is answered a second time"
                )
                return
        else:
            while self.answered[self.next]:
                self.next += 1
            position = self.next
            wanted = self.calls[position].name
            if result.name is not None and result.name != wanted:
                self.problems.append(
                    f"message {index}: a result of {result.name!r} where call "
                    f"{position + 1} of its turn was {wanted!r}"
                )
        self.answered[position] = True
        self.count += 1

    def unanswered(self) -> list[str]:
        if self.calls and self.count < len(self.calls):
            return [
                f"message {self.index}: {len(self.calls)} tool call(s) but only "
                f"{self.count} result(s)"
            ]
        return []

    def listed_ids(self) -> str:
        if self.shown is None:
            ids = sorted(map(str, self.by_id))
            more = len(ids) - SHOWN_IDS
            self.shown = f"{ids[:SHOWN_IDS]}" + (f" and {more} more" if more > 0 else "")
        return self.shown
