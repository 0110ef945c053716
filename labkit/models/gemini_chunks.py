"""Gemini ``GenerateContentResponse`` events, written by hand, and a planned turn streamed as
Gemini's ``streamGenerateContent?alt=sse`` streams it.

One builder for everything that makes Gemini events without a server: the scripted model
(``scripted.py`` streams a planned turn with :func:`gemini_turn_chunks`), the exercises'
cases and the tests. Each event is a whole response holding only the new parts: text in
token-sized pieces, then the calls whole, in one event (the first call carries the turn's
thought signature), the last event with ``finishReason`` and ``usageMetadata``. A reply
with no call carries its signature on its last part. On the wire each event is one
``data:`` line (no ``event:`` line, no closing ``[DONE]``), written as Google's servers
write JSON (:func:`gemini_event`).

A scripted thought signature is the base64 of a hash, standard and padded as the API's
are (the SDK decodes it to bytes and encodes it again when it sends it back): opaque, like a
real one, and fixed per turn.
"""

from __future__ import annotations

import base64
import hashlib
import json

from .script_pieces import fragments, scripted_id, timed

MODEL_VERSION = "scripted"


def gemini_event(event: dict) -> str:
    """A ``GenerateContentResponse`` as Gemini's server writes its event."""
    return "data: " + json.dumps(event, ensure_ascii=False, separators=(",", ": "))


def signature(seed: str) -> str:
    """A thought signature, fixed per seed: standard, padded base64, as the API sends them."""
    return base64.b64encode(hashlib.sha256(f"labkit scripted {seed}".encode()).digest()).decode()


def gemini_chunk(
    parts: list,
    finish_reason: str | None = None,
    *,
    usage: dict | None = None,
    response_id: str = "scripted",
    model_version: str = MODEL_VERSION,
) -> dict:
    """One streamed response: one candidate with these new parts (and its end, if given)."""
    candidate = {"content": {"parts": parts, "role": "model"}}
    if finish_reason:
        candidate["finishReason"] = finish_reason
    candidate["index"] = 0
    event = {"candidates": [candidate]}
    if usage:
        event["usageMetadata"] = usage
    event["modelVersion"] = model_version
    event["responseId"] = response_id
    return event


def usage_metadata(prompt_tokens: int, reply_tokens: int) -> dict:
    return {
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": reply_tokens,
        "totalTokenCount": prompt_tokens + reply_tokens,
    }


def function_call_part(name: str, args: dict, *, call_id: str | None = None, signed=None) -> dict:
    """A ``functionCall`` part: the call whole, with its signature beside it if it has one."""
    call = {"name": name, "args": args, **({"id": call_id} if call_id else {})}
    return {"functionCall": call, **({"thoughtSignature": signed} if signed else {})}


def gemini_turn_chunks(turn, first_call: int = 1, number: int = 1, *, tokens: int = 600):
    """The ``(at, event)`` pairs Gemini would stream for a planned turn
    (``scripted.PlannedTurn``; ``number`` counts turns, so each response has its own id)."""
    response_id = scripted_id("", f"gemini response {number}", 22)
    signed = signature(f"gemini thought signature {number}")
    ended = "MAX_TOKENS" if turn.done_reason == "length" else "STOP"
    events = [gemini_chunk([{"text": piece}]) for piece in fragments(turn.content)]
    calls = [
        function_call_part(
            planned["function"]["name"],
            planned["function"]["arguments"],
            signed=signed if offset == 0 else None,
        )
        for offset, planned in enumerate(turn.tool_calls)
    ]
    spent = usage_metadata(tokens, len(events) + 12 * len(calls))
    last = calls or [{"text": "", "thoughtSignature": signed}]
    events.append(gemini_chunk(last, ended, usage=spent))
    for event in events:
        event["responseId"] = response_id
    return timed(events)
