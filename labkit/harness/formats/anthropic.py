"""Anthropic's Messages stream: content blocks opened, filled and closed; complete at
``message_stop``.

A streamed reply is a series of events, one per server-sent event, each naming its
``type``: ``message_start`` first; then, per content block, ``content_block_start`` (a
``text`` block, a ``tool_use`` block with the call's ``id`` and ``name``, or the model's
reasoning: a ``thinking`` block, or a ``redacted_thinking`` block holding it encrypted),
``content_block_delta`` events (``text_delta`` with ``text``, ``input_json_delta`` with
``partial_json``, a fragment of the call's input as JSON text, ``thinking_delta`` and
``signature_delta``) and ``content_block_stop``;
then ``message_delta``, whose ``delta.stop_reason`` says why the reply ended, and
``message_stop``. ``ping`` events, and event types this harness does not know, carry
nothing for the turn: Anthropic says new ones may be added.

The reply is complete at ``message_stop``, with a ``stop_reason`` of ``"tool_use"`` or
``"end_turn"``; ``"max_tokens"`` means the output-length limit cut it, and it is refused
as Ollama's ``done_reason: "length"`` is. Only then is each tool's ``partial_json`` joined
and parsed (when none came, the input is the one its block started with, ``{}``).

The assistant message keeps the content blocks in their order (empty text blocks left out:
the API refuses them). A ``thinking`` block keeps its ``signature`` and a ``redacted_thinking``
block its ``data``, unchanged: the API checks that they come back as they were sent when a
tool call follows them, and refuses the next request otherwise. The results of one turn go
back together, as one ``user`` message whose content is a list of ``tool_result`` blocks,
each naming its call's ``tool_use_id``.

Linear in the stream's length: fragments are kept in lists and joined once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..contracts import CallRef, Chunk, Message, ResultRef, ToolCall, Turn
from ..frozen import freeze
from .assembly import ChunkAssembler, Malformed, frozen_arguments, kind, need, parse_arguments
from .messages import text_length, text_of

CLEAN_ENDS = ("tool_use", "end_turn")
#: The names the Messages API takes for a tool (its published schema: ^[a-zA-Z0-9_-]{1,64}$).
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: The events that make up a message; any other type (``ping``, and types added after this
#: harness was written) carries nothing for the turn, wherever it comes.
MESSAGE_EVENTS = (
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
)

#: The field that carries a delta's piece, by the block's type and the delta's.
DELTA_FIELDS = {
    ("text", "text_delta"): "text",
    ("tool_use", "input_json_delta"): "partial_json",
    ("thinking", "thinking_delta"): "thinking",
    ("thinking", "signature_delta"): "signature",
}


@dataclass
class BlockSoFar:
    """One content block as its deltas arrive: text pieces, a tool's input in JSON pieces, or
    the model's reasoning in pieces with its signature's pieces."""

    type: str  # "text", "tool_use", "thinking" or "redacted_thinking"
    id: str | None = None
    name: str | None = None
    start_input: dict | None = None  # a tool_use block's input as it started (``{}``)
    parts: list = field(default_factory=list)
    signature: list = field(default_factory=list)  # a thinking block's signature, in pieces
    data: str | None = None  # a redacted_thinking block's encrypted reasoning

    def content(self, joined: str, arguments=None) -> dict:
        """The block as the assistant message keeps it (``joined``: its pieces, joined)."""
        if self.type == "text":
            return {"type": "text", "text": joined}
        if self.type == "thinking":
            return {"type": "thinking", "thinking": joined, "signature": "".join(self.signature)}
        if self.type == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": arguments}


class AnthropicAssembler(ChunkAssembler):
    """Folds Messages stream events one at a time (``add``); ``turn()`` judges what arrived
    so far."""

    unit = "event"

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[int, BlockSoFar] = {}  # index -> BlockSoFar
        self.open: set[int] = set()  # indexes of blocks started and not yet stopped
        self.started = self.stopped = False  # message_start, message_stop arrived
        self.stop_reason: str | None = None

    def add(self, event: Chunk) -> str:
        """Fold one event in; return the text it carried ('' if none)."""
        self.chunks += 1
        if self.problem is not None:
            return ""
        # Most events are a text block's delta: they take this short way, which applies the
        # same rules as _fold to exactly that shape.
        if type(event) is dict and event.get("type") == "content_block_delta" and not self.stopped:
            index, delta = event.get("index"), event.get("delta")
            if type(index) is int and index in self.open and type(delta) is dict:
                piece = delta.get("text")
                if (
                    delta.get("type") == "text_delta"
                    and type(piece) is str
                    and self.blocks[index].type == "text"
                ):
                    if piece:
                        self.blocks[index].parts.append(piece)
                    return piece
        return self._checked_add(event)

    def _fold(self, event: Chunk) -> str:
        need(isinstance(event, dict), f"{kind(event)}, not a JSON object")
        kind_ = event.get("type")
        need(isinstance(kind_, str), f"an event whose 'type' is {kind(kind_)}, not text")
        need(kind_ != "error", f"an error from the server: {event.get('error')}")
        if kind_ not in MESSAGE_EVENTS:
            return ""  # ping, and event types added after this harness was written
        need(not self.stopped, f"a {kind_!r} event arrived after message_stop")
        if not self.started:
            need(
                kind_ == "message_start", f"the stream must begin with message_start, not {kind_!r}"
            )
            self.started = True
            return ""
        if kind_ == "content_block_start":
            return self._start(event)
        if kind_ == "content_block_delta":
            return self._delta(event)
        if kind_ == "content_block_stop":
            index = event.get("index")
            need(
                type(index) is int and index in self.open,
                f"content_block_stop for block {index!r}, which is not open",
            )
            self.open.discard(index)
        elif kind_ == "message_delta":
            delta = event.get("delta")
            need(isinstance(delta, dict), "message_delta has no 'delta' object")
            reason = delta.get("stop_reason")
            need(reason is None or isinstance(reason, str), f"stop_reason is {kind(reason)}")
            self.stop_reason = reason or self.stop_reason
        elif kind_ == "message_stop":
            need(
                not self.open,
                f"message_stop arrived while content block {min(self.open, default=0)} "
                "was still open",
            )
            self.stopped = True
        else:
            raise Malformed("a second message_start")
        return ""

    def _start(self, event: dict) -> str:
        index, block = event.get("index"), event.get("content_block")
        need(
            type(index) is int and index not in self.blocks,
            f"content_block_start has index {index!r}, not the number of a new block",
        )
        need(isinstance(block, dict), f"block {index}: 'content_block' is {kind(block)}")
        if block.get("type") in ("text", "thinking"):
            block_type = block["type"]
            text, signature = block.get(block_type) or "", block.get("signature") or ""
            need(isinstance(text, str), f"block {index}: its {block_type} is {kind(text)}")
            need(isinstance(signature, str), f"block {index}: its signature is {kind(signature)}")
            self.blocks[index] = BlockSoFar(
                block_type, parts=[text] if text else [], signature=[signature] if signature else []
            )
            text = text if block_type == "text" else ""
        elif block.get("type") == "redacted_thinking":
            data = block.get("data")
            need(isinstance(data, str) and data, f"redacted_thinking block {index} has no 'data'")
            self.blocks[index] = BlockSoFar("redacted_thinking", data=data)
            text = ""
        elif block.get("type") == "tool_use":
            call_id, name, start = block.get("id"), block.get("name"), block.get("input", {})
            need(isinstance(call_id, str) and call_id, f"tool_use block {index} has no 'id'")
            need(isinstance(name, str) and name, f"tool_use block {index} has no 'name'")
            need(isinstance(start, dict), f"tool_use block {index} starts with input {kind(start)}")
            need(
                all(other.id != call_id for other in self.blocks.values()),
                f"tool_use block {index} has the id {call_id[:100]!r} of an earlier block: "
                "their results could not be told apart",
            )
            start = frozen_arguments(start, f"the input of tool_use block {index} is")
            self.blocks[index] = BlockSoFar("tool_use", call_id, name, start)
            text = ""
        else:
            raise Malformed(
                f"block {index} is a {block.get('type')!r} block; this harness "
                "assembles 'text', 'tool_use', 'thinking' and 'redacted_thinking' blocks"
            )
        self.open.add(index)
        return text

    def _delta(self, event: dict) -> str:
        index, delta = event.get("index"), event.get("delta")
        need(
            type(index) is int and index in self.open,
            f"a delta for block {index!r}, which is not open",
        )
        need(isinstance(delta, dict), f"block {index}: the delta is {kind(delta)}")
        block, delta_type = self.blocks[index], delta.get("type")
        field_ = DELTA_FIELDS.get((block.type, delta_type)) if isinstance(delta_type, str) else None
        need(field_, f"a {delta.get('type')!r} delta for {block.type} block {index}")
        piece = delta.get(field_)
        need(isinstance(piece, str), f"block {index}: delta.{field_} is {kind(piece)}, not text")
        if piece:
            (block.signature if field_ == "signature" else block.parts).append(piece)
        return piece if block.type == "text" else ""

    def calls_so_far(self) -> list[tuple[str, str, str]]:
        """``(id, name, input's JSON text so far)`` of each tool_use block, in block order."""
        return [
            (block.id, block.name, "".join(block.parts))
            for _, block in sorted(self.blocks.items())
            if block.type == "tool_use"
        ]

    def unfinished(self) -> str | None:
        """Why the reply has not finished cleanly (so far), or None when it has."""
        if not self.stopped:
            return "the stream ended without message_stop"
        if self.stop_reason == "max_tokens":
            return "the reply was cut by the output-length limit (stop_reason 'max_tokens')"
        if self.stop_reason not in CLEAN_ENDS:
            return (
                f"the reply ended with stop_reason {self.stop_reason!r}, not 'tool_use' "
                "or 'end_turn'"
            )
        return None

    def turn(self) -> Turn:
        blocks = [
            (index, block, "".join(block.parts)) for index, block in sorted(self.blocks.items())
        ]
        problem, unfinished = self.problem, self.unfinished()
        complete = problem is None and unfinished is None
        content, calls = [], []
        try:
            for index, block, joined in blocks:
                if block.type != "tool_use":
                    if joined or block.type != "text":
                        content.append(block.content(joined))
                    continue
                arguments = block.start_input
                if complete and joined:  # now the JSON text is whole
                    arguments = parse_arguments(joined, f"tool_use block {index} ({block.name!r})")
                content.append(block.content(joined, arguments))
                calls.append(ToolCall(block.id, block.name, arguments))
        except Malformed as exc:
            problem = f"at the end of the reply: {exc}"
        text = "".join(joined for _, block, joined in blocks if block.type == "text")
        return Turn(
            freeze({"role": "assistant", "content": content}),
            text,
            calls if complete and problem is None else [],
            self.stopped,
            self.stop_reason if self.stopped else None,
            problem,
            unfinished,
            self.chunks,
        )


def tool_results_message(calls: list[ToolCall], results: list) -> Message:
    """The one ``user`` message that carries a turn's results back (Anthropic's shape)."""
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": json.dumps(result)}
            for call, result in zip(calls, results)
        ],
    }


class Anthropic:
    """Anthropic Messages: server-sent events, content blocks with ``input_json_delta``
    fragments, ``stop_reason`` in ``message_delta``; a turn's results go back together, as
    ``tool_result`` blocks in one ``user`` message."""

    name = "anthropic"
    reply_role = "assistant"

    def assembler(self) -> AnthropicAssembler:
        return AnthropicAssembler()

    def tool_results(self, calls: list[ToolCall], results: list) -> list[Message]:
        return [tool_results_message(calls, results)] if calls else []

    def tool_schema(self, name: str, description: str, parameters: dict) -> dict:
        """``{"name", "description", "input_schema"}``: no ``function`` wrapper, and the
        parameters' schema under another key."""
        problem = self.tool_name_problem(name)
        if problem:
            raise ValueError(problem)
        return {"name": name, "description": description, "input_schema": parameters}

    def tool_name_problem(self, name: str) -> str | None:
        if isinstance(name, str) and TOOL_NAME.fullmatch(name):
            return None
        return f"{name!r:.80} is not a valid Anthropic tool name (1 to 64 of a-z A-Z 0-9 _ -)"

    # A message's content is a string or a list of blocks: text under its role, a
    # ``tool_use`` block's name and input as a call, a ``tool_result`` block's content as a
    # result, a ``thinking`` block as thinking; any other block counts as its JSON.

    def sizes(self, message: Message) -> dict[str, int]:
        role, content = message.get("role"), message.get("content")
        sizes = {role: 0, "thinking": 0, "tool_calls": 0, "tool": 0}
        for block in content if isinstance(content, list) else [content]:
            kind_ = block.get("type") if isinstance(block, dict) else None
            if kind_ == "tool_use":
                call = {"name": block.get("name"), "input": block.get("input")}
                sizes["tool_calls"] += len(json.dumps(call, default=str))
            elif kind_ == "tool_result":
                sizes["tool"] += text_length(block.get("content"))
            elif kind_ == "thinking":
                sizes["thinking"] += len(block.get("thinking") or "")
            else:
                sizes[role] += text_length([block] if isinstance(block, dict) else block)
        return sizes

    def calls_in(self, message: Message) -> list[CallRef]:
        if message.get("role") != "assistant":
            return []
        return [
            CallRef(block.get("id"), block.get("name")) for block in _blocks(message, "tool_use")
        ]

    def results_in(self, message: Message) -> list[ResultRef]:
        return [
            ResultRef(block.get("tool_use_id"), None, text_of(block.get("content")))
            for block in _blocks(message, "tool_result")
        ]

    def with_results(self, message: Message, contents: list[str]) -> Message:
        given, content = iter(contents), []
        for block in message.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block = {**block, "content": next(given, block.get("content"))}
            content.append(block)
        return {**message, "content": content}


def _blocks(message: Message, kind_: str) -> list[dict]:
    """The content blocks of ``kind_`` a message holds, in order."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == kind_]


FORMAT = Anthropic()
