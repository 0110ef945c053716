"""Scripted model turns: planned turns streamed as a server streams them.

A scripted model is a list of planned turns streamed the way a real server streams
them, in the wire format it is asked for:

- Ollama's: thinking and text in small fragments and tool calls on a ``done: false``
  chunk before the final one, each call with an ``id`` (``call_`` and 8 characters)
  and its ``function.index`` in the turn, each chunk written as the NDJSON line
  Ollama's Go server would send;
- OpenAI's: a first chunk with the role, text fragments, then per call a first entry
  with its ``index``, ``id`` and name and the arguments' JSON text in fragments, then a
  chunk with ``finish_reason``; each chunk a ``data:`` event;
- Anthropic's: ``message_start``, a text block, a ``tool_use`` block per call whose input
  streams as ``input_json_delta`` fragments, ``message_delta`` with the stop reason and
  ``message_stop``; each an ``event:``/``data:`` pair;
- the Responses API's and Gemini's: ``responses_chunks.py`` and ``gemini_chunks.py``.

Those four APIs stream no thinking unless asked for it, so their scripts leave it out:
the five formats carry the same text and the same calls. Anthropic's script can stream
as a client that asks for extended thinking gets it (``thinking=True``: a ``thinking``
block first, its reasoning in ``thinking_delta`` pieces, then its ``signature``), with the
``ping`` Anthropic sends after ``message_start`` (``pings=True``) and ``message_delta``'s
usage cumulative, input tokens included (``cumulative_usage=True``). The chunks say ``"model":
"scripted"``: no model wrote them.

The course's scripted recordings are made from these by ``labkit.recording.scenarios``
(``make recordings``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from .chunks import (
    anthropic_block,
    anthropic_delta,
    anthropic_end,
    anthropic_start,
    anthropic_stop,
    chunk,
    openai_arguments,
    openai_call_start,
    openai_chunk,
)
from .gemini_chunks import gemini_event, gemini_turn_chunks
from .go_json import go_time, ollama_line
from .responses_chunks import responses_event, responses_turn_chunks
from .script_pieces import FIRST_CHUNK_AT, FRAGMENT_EVERY, fragments, scripted_id, timed
from .sse import anthropic_event, openai_event

MODEL_NAME = "scripted"
STARTED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def call_id(number: int) -> str:
    """A tool call id shaped like Ollama's (``call_`` and 8 of a-z0-9), fixed per call number."""
    digest = hashlib.sha256(f"labkit scripted tool call {number}".encode()).digest()
    return "call_" + "".join(ID_ALPHABET[byte % len(ID_ALPHABET)] for byte in digest[:8])


ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass
class PlannedTurn:
    thinking: str = ""
    content: str = ""
    tool_calls: list = field(default_factory=list)
    done_reason: str = "stop"


def turn_chunks(turn: PlannedTurn, prompt_tokens: int = 600, first_call: int = 1) -> list:
    """The ``(at, chunk)`` pairs a server would stream for a planned turn.

    ``first_call`` numbers the turn's first tool call among all calls of the run, so
    that every call of a conversation gets its own id.
    """
    pieces = [("thinking", f) for f in fragments(turn.thinking)]
    pieces += [("content", f) for f in fragments(turn.content)]
    timeline = [FIRST_CHUNK_AT + i * FRAGMENT_EVERY for i in range(len(pieces) + 2)]
    chunks = [
        _chunk(
            timeline[i],
            {
                "content": text if kind == "content" else "",
                **({"thinking": text} if kind == "thinking" else {}),
            },
        )
        for i, (kind, text) in enumerate(pieces)
    ]
    at = timeline[len(pieces)]
    if turn.tool_calls:
        sent = [
            {"id": call_id(first_call + index), "function": {"index": index, **planned["function"]}}
            for index, planned in enumerate(turn.tool_calls)
        ]
        chunks.append(_chunk(at, {"content": "", "tool_calls": sent}))
    end = timeline[-1]
    final = _chunk(end, {"content": ""}, done=True)
    eval_count = len(pieces) + len(turn.tool_calls) * 12
    final.update(
        done_reason=turn.done_reason,
        total_duration=_ns(end),
        load_duration=_ns(0.05),
        prompt_eval_count=prompt_tokens,
        prompt_eval_duration=_ns(FIRST_CHUNK_AT - 0.05),
        eval_count=eval_count,
        eval_duration=_ns(end - FIRST_CHUNK_AT),
    )
    chunks.append(final)
    return [(round(chunk.pop("_at"), 6), chunk) for chunk in chunks]


def openai_turn_chunks(turn: PlannedTurn, first_call: int = 1, number: int = 1) -> list:
    """The ``(at, chunk)`` pairs OpenAI's Chat Completions would stream for a planned turn
    (``number`` counts turns in the run, so each completion has its own id)."""
    deltas = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in fragments(turn.content)]
    for index, planned in enumerate(turn.tool_calls):
        function = planned["function"]
        call_id = scripted_id("call_", f"openai call {first_call + index}")
        deltas.append({"tool_calls": [openai_call_start(index, call_id, function["name"])]})
        deltas += [
            {"tool_calls": [openai_arguments(index, piece)]}
            for piece in fragments(json.dumps(function["arguments"]))
        ]
    ended = {"stop": "tool_calls" if turn.tool_calls else "stop"}.get(
        turn.done_reason, turn.done_reason
    )
    completion = scripted_id("chatcmpl-", f"openai completion {number}", 29)
    chunks = [openai_chunk(delta, chunk_id=completion) for delta in deltas]
    chunks.append(openai_chunk({}, ended, chunk_id=completion))
    return timed(chunks)


def scripted_signature(number: int) -> str:
    """A thinking block's signature for turn ``number``: padded standard base64, as the APIs'
    signatures are, fixed per turn (no key made it: the API would refuse it)."""
    seed = hashlib.sha256(f"labkit scripted thinking signature {number}".encode()).digest()
    return base64.b64encode(seed * 3).decode()


def anthropic_turn_chunks(
    turn: PlannedTurn,
    first_call: int = 1,
    number: int = 1,
    *,
    input_tokens: int = 600,
    thinking: bool = False,
    pings: bool = False,
    cumulative_usage: bool = False,
) -> list:
    """The ``(at, event)`` pairs Anthropic's Messages API would stream for a planned turn
    (the options: see the module's description)."""
    events = [
        anthropic_start(
            message_id=scripted_id("msg_01", f"anthropic message {number}", 22),
            input_tokens=input_tokens,
        )
    ]
    if pings:
        events.append({"type": "ping"})
    block = 0
    if thinking and turn.thinking:
        events.append(anthropic_block(block, {"type": "thinking", "thinking": "", "signature": ""}))
        events += [anthropic_delta(block, thinking=piece) for piece in fragments(turn.thinking)]
        events.append(anthropic_delta(block, signature=scripted_signature(number)))
        events.append(anthropic_stop(block))
        block += 1
    if turn.content:
        events.append(anthropic_block(block, {"type": "text", "text": ""}))
        events += [anthropic_delta(block, text=piece) for piece in fragments(turn.content)]
        events.append(anthropic_stop(block))
        block += 1
    for index, planned in enumerate(turn.tool_calls):
        function = planned["function"]
        call_id = scripted_id("toolu_01", f"anthropic call {first_call + index}", 22)
        events.append(
            anthropic_block(
                block, {"type": "tool_use", "id": call_id, "name": function["name"], "input": {}}
            )
        )
        events.append(anthropic_delta(block, partial_json=""))  # the API's first one is empty
        events += [
            anthropic_delta(block, partial_json=piece)
            for piece in fragments(json.dumps(function["arguments"]))
        ]
        events.append(anthropic_stop(block))
        block += 1
    ended = {"stop": "tool_use" if turn.tool_calls else "end_turn", "length": "max_tokens"}.get(
        turn.done_reason, turn.done_reason
    )
    events += anthropic_end(
        ended, output_tokens=len(events), input_tokens=input_tokens if cumulative_usage else None
    )
    return timed(events)


#: How each wire format streams a planned turn, and writes a chunk on the wire.
#: Each takes ``(turn, prompt_tokens, first_call, number, **options)``; OpenAI's stream
#: carries no usage; only Anthropic's takes options.
STREAMS = {
    "ollama": (lambda turn, tokens, first, number: turn_chunks(turn, tokens, first), ollama_line),
    "openai": (
        lambda turn, tokens, first, number: openai_turn_chunks(turn, first, number),
        openai_event,
    ),
    "anthropic": (
        lambda turn, tokens, first, number, **options: anthropic_turn_chunks(
            turn, first, number, input_tokens=tokens, **options
        ),
        anthropic_event,
    ),
    "openai-responses": (
        lambda turn, tokens, first, number: responses_turn_chunks(
            turn, first, number, tokens=tokens
        ),
        responses_event,
    ),
    "gemini": (
        lambda turn, tokens, first, number: gemini_turn_chunks(turn, first, number, tokens=tokens),
        gemini_event,
    ),
}


class ScriptedChat:
    """A ``chat`` that streams planned turns in order, whatever it is asked, in
    ``wire_format`` (``"ollama"``, ``"openai"``, ``"anthropic"``, ``"openai-responses"`` or
    ``"gemini"``).

    It keeps a virtual clock, advanced to each chunk's planned arrival time, so a
    recording of it holds the planned times rather than this machine's speed.
    ``prompt_tokens(messages, tool_schemas)``, if given, writes each final chunk's
    ``prompt_eval_count``; without it every request says 600. ``options``: how the
    format's stream is written (Anthropic's: ``thinking``, ``pings``, ``cumulative_usage``).
    """

    def __init__(self, turns, wire_format: str = "ollama", *, prompt_tokens=None, options=None):
        if wire_format not in STREAMS:
            raise ValueError(
                f"unknown wire format {wire_format!r}; the formats are {sorted(STREAMS)}"
            )
        self.stream, self.line = STREAMS[wire_format]
        self.wire_format = wire_format
        starts = [1]
        for turn in turns:
            starts.append(starts[-1] + len(turn.tool_calls))
        self.planned = list(zip(turns, starts))
        self.prompt_tokens = prompt_tokens
        self.options = dict(options or {})
        self.now = 0.0
        self.requests = 0

    def clock(self) -> float:
        return self.now

    def __call__(self, messages, tool_schemas):
        return (chunk for chunk, _ in self.chunks_with_lines(messages, tool_schemas))

    def chunks_with_lines(self, messages, tool_schemas):
        """Each chunk with the line a server sends for it: ``(chunk, line)``."""
        turn, first_call = self.planned[self.requests]
        self.requests += 1
        tokens = 600 if self.prompt_tokens is None else self.prompt_tokens(messages, tool_schemas)
        return self._stream(self.stream(turn, tokens, first_call, self.requests, **self.options))

    def _stream(self, planned):
        start = self.now
        for at, planned_chunk in planned:
            self.now = start + at
            yield planned_chunk, self.line(planned_chunk)


def _chunk(at: float, message: dict, done: bool = False) -> dict:
    return {
        "_at": at,
        **chunk(
            **message,
            done=done,
            model=MODEL_NAME,
            created_at=go_time(STARTED + timedelta(seconds=at)),
        ),
    }


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))
