"""OpenAI Responses API events, written by hand, and a planned turn streamed as that API
streams it.

One builder for everything that makes Responses events without a server: the scripted model
(``scripted.py`` streams a planned turn with :func:`responses_turn_chunks`), the replay
server's whole replies, the exercises' cases and the tests. The order is the one the API
documents and the official SDKs' stream helpers require: ``response.created`` first, an
item added before anything about it, a content part added before its text, every item
done before ``response.completed``, whose ``response.output`` holds them all. Every event
carries its ``sequence_number``. On the wire each is a named server-sent event
(``event: <type>`` then ``data: <json>``), as OpenAI writes them (:func:`responses_event`).
"""

from __future__ import annotations

import json

from .chunks import CREATED_UNIX
from .script_pieces import fragments, scripted_id, timed

MODEL = "scripted"


def responses_event(event: dict) -> str:
    """A Responses stream event as OpenAI's server writes it: its type, then its data."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event.get('type')}\ndata: {data}"


def response_object(
    response_id: str,
    status: str = "in_progress",
    output: list | None = None,
    *,
    usage: dict | None = None,
    reason: str | None = None,
    model: str = MODEL,
) -> dict:
    """The ``response`` object as the API gives it (``status``: ``in_progress``,
    ``completed`` or ``incomplete``, then ``reason`` says why)."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": CREATED_UNIX,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": reason} if reason else None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": output or [],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": None,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": None,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    }


def usage(input_tokens: int, output_tokens: int) -> dict:
    """A response's ``usage``, as the API reports it."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def text_part(text: str = "") -> dict:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def message_item(item_id: str, text: str | None = None) -> dict:
    """A ``message`` output item: in progress and empty, or (``text``) completed."""
    if text is None:
        return {"id": item_id, "type": "message", "status": "in_progress", "content": [],
                "role": "assistant"}  # fmt: skip
    return {"id": item_id, "type": "message", "status": "completed", "content": [text_part(text)],
            "role": "assistant"}  # fmt: skip


def call_item(item_id: str, call_id: str, name: str, arguments: str | None = None) -> dict:
    """A ``function_call`` output item: just added (``arguments`` None), or completed."""
    return {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress" if arguments is None else "completed",
        "arguments": arguments or "",
        "call_id": call_id,
        "name": name,
    }


def item_event(kind: str, index: int, item: dict) -> dict:
    """``response.output_item.added`` or ``.done`` (``kind``: "added" or "done")."""
    return {"type": f"response.output_item.{kind}", "output_index": index, "item": item}


def text_events(item_id: str, index: int, pieces: list) -> list:
    """A message item's text: its part added, the pieces as deltas, then text and part done."""
    at = {"item_id": item_id, "output_index": index, "content_index": 0}
    text = "".join(pieces)
    return [
        {"type": "response.content_part.added", **at, "part": text_part()},
        *({"type": "response.output_text.delta", **at, "delta": p, "logprobs": []} for p in pieces),
        {"type": "response.output_text.done", **at, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **at, "part": text_part(text)},
    ]


def arguments_events(item_id: str, index: int, pieces: list) -> list:
    """A call's arguments: each piece a delta, then the whole text in the done event."""
    at = {"item_id": item_id, "output_index": index}
    return [
        *({"type": "response.function_call_arguments.delta", **at, "delta": p} for p in pieces),
        {"type": "response.function_call_arguments.done", **at, "arguments": "".join(pieces)},
    ]


def numbered(events: list) -> list:
    """The events with their ``sequence_number``, counted from 0 across the stream."""
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def responses_turn_chunks(turn, first_call: int = 1, number: int = 1, *, tokens: int = 600):
    """The ``(at, event)`` pairs the Responses API would stream for a planned turn
    (``scripted.PlannedTurn``; ``number`` counts turns, so each response has its own id)."""
    response_id = scripted_id("resp_", f"responses response {number}", 32)
    events = [
        {"type": "response.created", "response": response_object(response_id)},
        {"type": "response.in_progress", "response": response_object(response_id)},
    ]
    output = []
    if turn.content:
        item_id = scripted_id("msg_", f"responses message {number}", 32)
        pieces = fragments(turn.content)
        events.append(item_event("added", 0, message_item(item_id)))
        events += text_events(item_id, 0, pieces)
        output.append(message_item(item_id, "".join(pieces)))
        events.append(item_event("done", 0, output[-1]))
    for offset, planned in enumerate(turn.tool_calls):
        function, index = planned["function"], len(output)
        item_id = scripted_id("fc_", f"responses item {first_call + offset}", 32)
        call_id = scripted_id("call_", f"responses call {first_call + offset}")
        pieces = fragments(json.dumps(function["arguments"]))
        events.append(item_event("added", index, call_item(item_id, call_id, function["name"])))
        events += arguments_events(item_id, index, pieces)
        output.append(call_item(item_id, call_id, function["name"], "".join(pieces)))
        events.append(item_event("done", index, output[-1]))
    spent = usage(tokens, len(events))
    if turn.done_reason == "length":
        ended = response_object(
            response_id, "incomplete", output, usage=spent, reason="max_output_tokens"
        )
        events.append({"type": "response.incomplete", "response": ended})
    else:
        ended = response_object(response_id, "completed", output, usage=spent)
        events.append({"type": "response.completed", "response": ended})
    return timed(numbered(events))
