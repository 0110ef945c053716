"""The conversation as data: what it carries, and whether a model can still be sent it.

Every request carries the whole conversation, so these pure functions are where lesson 08
starts: ``measure`` counts a conversation's characters per kind of message,
``request_sizes`` does it for each request of a recording (with the prompt tokens the
server counted), and ``order_problems`` says what, if anything, breaks the rules a
provider enforces on a conversation (each tool result after the call it answers).
Lesson 09 adds what the tools' schemas cost on every request: ``schema_sizes``. The
budget (``budget.py``) counts with ``measure``, and what its ``compact`` leaves must be a
conversation in which ``order_problems`` finds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .contracts import Message


def measure(messages: Iterable[Message]) -> dict[str, int]:
    """Characters per message kind: the text each role carries, and the model's thinking
    and tool calls (both are sent back with its messages)."""
    sizes = {"system": 0, "user": 0, "assistant": 0, "thinking": 0, "tool_calls": 0, "tool": 0}
    for message in messages:
        role = message.get("role")
        sizes[role] = sizes.get(role, 0) + len(message.get("content") or "")
        sizes["thinking"] += len(message.get("thinking") or "")
        for call in message.get("tool_calls") or ():
            sizes["tool_calls"] += len(json.dumps(call.get("function", call)))
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
    """One row per recorded request: its characters per kind, and the prompt tokens the
    server counted (``prompt_eval_count`` of the final chunk), or None where it did not."""
    rows = []
    for number, turn in enumerate(recording["turns"], start=1):
        final = turn["chunks"][-1]["chunk"] if turn["chunks"] else {}
        rows.append(
            {
                "request": number,
                **measure(turn["request"]["messages"]),
                "prompt_tokens": final.get("prompt_eval_count"),
            }
        )
    return rows


def order_problems(messages: Sequence[Message]) -> list[str]:
    """What makes ``messages`` a conversation a model cannot be sent; empty if none.

    It must open with the system prompt and the user's task; each tool message must
    follow the assistant message that called it (or that message's other results), and
    each assistant message gets exactly one result per call it made. A result that carries
    a ``tool_call_id`` must name one of its turn's calls; one that does not (Ollama's)
    answers the calls in order, so its ``tool_name`` must be that call's name.
    """
    problems: list[str] = []
    roles = [message.get("role") for message in messages]
    if roles[:2] != ["system", "user"]:
        problems.append(f"the conversation must start with system and user, not {roles[:2]}")
    calls, answered, asked_at = None, 0, None

    def unanswered() -> None:
        if calls and answered < len(calls):
            problems.append(
                f"message {asked_at}: {len(calls)} tool call(s) but only {answered} result(s)"
            )

    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            unanswered()
            calls, answered, asked_at = list(message.get("tool_calls") or ()), 0, index
        elif role == "tool":
            if calls is None or answered >= len(calls):
                problems.append(f"message {index}: a tool result with no call left to answer")
                continue
            given, name = message.get("tool_call_id"), message.get("tool_name")
            wanted = calls[answered].get("function", {}).get("name")
            ids = sorted(call["id"] for call in calls if call.get("id") is not None)
            if given is not None and given not in ids:
                problems.append(
                    f"message {index}: tool_call_id {given!r} pairs with no call "
                    f"of its turn ({ids})"
                )
            elif given is None and name is not None and name != wanted:
                problems.append(
                    f"message {index}: a result of {name!r} where call "
                    f"{answered + 1} of its turn was {wanted!r}"
                )
            answered += 1
        else:
            unanswered()
            calls = None
    unanswered()
    return problems
