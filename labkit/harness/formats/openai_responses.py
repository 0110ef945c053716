"""OpenAI's Responses API stream: typed events about output items; complete at
``response.completed``.

A streamed reply is a series of events, one per server-sent event, each naming its
``type``. It begins with ``response.created``. Each piece of the reply is an **output
item**, opened by ``response.output_item.added`` (the item, with its ``id``) and closed by
``response.output_item.done``; in between, events name the item they add to by its
``item_id`` (and its place, ``output_index``):

- a ``message`` item gets content parts (``response.content_part.added``), each filled by
  ``response.output_text.delta`` events (``delta``: a piece of text);
- a ``function_call`` item brings the call's ``call_id`` and ``name`` when it is added; its
  arguments stream as ``response.function_call_arguments.delta`` events, fragments of one
  JSON text cut anywhere; ``response.function_call_arguments.done`` repeats them whole;
- other items (``reasoning``, and kinds added after this harness was written) are kept as
  their ``done`` event gives them, and carry nothing for the turn.

The reply ends with ``response.completed`` (a clean end: the only one) or
``response.incomplete``, whose ``incomplete_details.reason`` says why;
``"max_output_tokens"`` means the output-length limit cut the reply, and it is refused as
Ollama's ``done_reason: "length"`` is. A ``response.failed`` or ``error`` event is the
server failing. Only at ``response.completed`` are each call's fragments joined and
parsed. Other event types (``response.in_progress``, the ``*.done`` events of text, and
types added later) carry nothing the turn needs.

Items are told apart by their ``id``, not their ``output_index``: Ollama's ``/v1/responses``
gives a call the index of the text item before it. The loop keeps one assistant message per
turn, ``{"role": "assistant", "output": [...]}``: the turn's items as they go back in the
next request (text as ``{"role": "assistant", "content": ...}``, each call as a
``function_call`` item, other items whole); ``ResponsesModel`` spreads them into the
request's ``input``, which is the whole conversation every time (no
``previous_response_id``). Each result goes back as a ``function_call_output`` item naming
the call's ``call_id``. Linear in the stream's length: fragments are kept in lists and
joined once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..contracts import CallRef, Chunk, Message, ResultRef, ToolCall, Turn
from ..frozen import freeze
from .assembly import ChunkAssembler, Malformed, kind, need, parse_arguments
from .messages import text_length, text_of
from .openai import FORMAT as OPENAI

CLEAN_END = "response.completed"
ENDS = (CLEAN_END, "response.incomplete")
TEXT_DELTAS = {"response.output_text.delta": "output_text", "response.refusal.delta": "refusal"}


@dataclass
class ItemSoFar:
    """One output item as its events arrive: a message's parts (content index -> [type,
    pieces]), a call's id, name and argument fragments, or another item kept whole."""

    type: str
    call_id: str | None = None
    name: str | None = None
    parts: list = field(default_factory=list)  # a call's argument fragments
    content: dict = field(default_factory=dict)  # a message's parts by content_index
    whole: dict | None = None  # any other item, as it was last given


class ResponsesAssembler(ChunkAssembler):
    """Folds Responses stream events one at a time (``add``); ``turn()`` judges what arrived
    so far."""

    unit = "event"

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[object, ItemSoFar] = {}  # item id -> ItemSoFar, in the order added
        self.started = False
        self.ended: str | None = None  # "response.completed" or "response.incomplete"
        self.reason: str | None = None  # incomplete_details.reason

    def add(self, event: Chunk) -> str:
        """Fold one event in; return the text it carried ('' if none)."""
        self.chunks += 1
        if self.problem is not None:
            return ""
        # Most events are a piece of text: they take this short way, which applies the same
        # rules as _fold to exactly that shape.
        if type(event) is dict and event.get("type") == "response.output_text.delta":
            named = event.get("item_id")
            item = self.items.get(named) if type(named) is str else None
            piece = event.get("delta")
            index = event.get("content_index")
            if item is not None and self.ended is None and type(piece) is str:
                part = item.content.get(index) if type(index) is int else None
                if part is not None and part[0] == "output_text":
                    if piece:
                        part[1].append(piece)
                    return piece
        return self._checked_add(event)

    def _fold(self, event: Chunk) -> str:
        need(isinstance(event, dict), f"{kind(event)}, not a JSON object")
        kind_ = event.get("type")
        need(isinstance(kind_, str), f"an event whose 'type' is {kind(kind_)}, not text")
        if kind_ == "error":
            raise Malformed(f"an error from the server: {event.get('message')}")
        if kind_ == "response.failed":
            response = event.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            raise Malformed(f"the server reports the response failed: {error}")
        if not self.started:
            need(
                kind_ == "response.created",
                f"the stream must begin with response.created, not {kind_!r}",
            )
            self.started = True
            return ""
        need(self.ended is None, f"a {kind_!r} event arrived after {self.ended}")
        if kind_ == "response.output_item.added":
            self._added(event)
        elif kind_ == "response.content_part.added":
            part = event.get("part")
            need(isinstance(part, dict), f"content_part.added: 'part' is {kind(part)}")
            index = self._content_index(event)
            item = self._item(event, "message")
            need(index not in item.content, f"content part {index} was added twice")
            start = part.get("text") or part.get("refusal") or ""
            need(isinstance(start, str), f"content part {index} starts with {kind(start)}")
            item.content[index] = [part.get("type"), [start] if start else []]
        elif kind_ in TEXT_DELTAS:
            return self._text(event, TEXT_DELTAS[kind_])
        elif kind_ == "response.function_call_arguments.delta":
            piece = event.get("delta")
            need(isinstance(piece, str), f"an arguments delta is {kind(piece)}, not text")
            if piece:
                self._item(event, "function_call").parts.append(piece)
        elif kind_ == "response.function_call_arguments.done":
            self._arguments_done(event)
        elif kind_ == "response.output_item.done":
            self._done(event)
        elif kind_ in ENDS:
            self._end(event, kind_)
        return ""  # in_progress, text and part *.done, reasoning summaries, newer events

    def _key(self, event: dict, item: dict | None = None) -> object:
        """How an event names its item: the item's id, else its output_index."""
        named = (item or {}).get("id") if item is not None else event.get("item_id")
        if isinstance(named, str) and named:
            return named
        index = event.get("output_index")
        need(type(index) is int, "an event names its item by neither item_id nor output_index")
        return ("output_index", index)

    def _item(self, event: dict, wanted: str) -> ItemSoFar:
        key = self._key(event)
        item = self.items.get(key)
        need(item is not None, f"an event for item {key!r}, which was never added")
        need(item.type == wanted, f"a {event['type']!r} event for a {item.type!r} item")
        return item

    def _content_index(self, event: dict) -> int:
        index = event.get("content_index", 0)
        need(type(index) is int and index >= 0, f"content_index is {index!r}, not a number")
        return index

    def _added(self, event: dict) -> None:
        item = event.get("item")
        need(isinstance(item, dict), f"output_item.added: 'item' is {kind(item)}")
        key = self._key(event, item)
        need(key not in self.items, f"item {key!r} was added twice")
        item_type = item.get("type")
        need(isinstance(item_type, str), f"item {key!r} has no 'type'")
        if item_type == "function_call":
            call_id, name, start = item.get("call_id"), item.get("name"), item.get("arguments")
            need(isinstance(call_id, str) and call_id, f"function_call {key!r} has no 'call_id'")
            need(isinstance(name, str) and name, f"function_call {key!r} has no 'name'")
            need(start is None or isinstance(start, str), f"function_call {key!r}: arguments")
            need(
                all(other.call_id != call_id for other in self.items.values()),
                f"function_call {key!r} has the call_id {call_id[:100]!r} of an earlier call: "
                "their results could not be told apart",
            )
            self.items[key] = ItemSoFar(item_type, call_id, name, [start] if start else [])
        elif item_type == "message":
            self.items[key] = ItemSoFar(item_type)
        else:
            self.items[key] = ItemSoFar(item_type, whole=item)

    def _text(self, event: dict, part_type: str) -> str:
        piece = event.get("delta")
        need(isinstance(piece, str), f"a text delta is {kind(piece)}, not text")
        index = self._content_index(event)
        part = self._item(event, "message").content.get(index)
        need(part is not None, f"a text delta for content part {index}, which was never added")
        need(part[0] == part_type, f"a {part_type} delta for a {part[0]!r} part")
        if piece:
            part[1].append(piece)
        return piece

    def _arguments_done(self, event: dict) -> None:
        """The whole arguments: they must be what the deltas said (or stand for them if
        none came)."""
        item, whole = self._item(event, "function_call"), event.get("arguments")
        need(isinstance(whole, str), f"arguments.done: 'arguments' is {kind(whole)}, not text")
        if not item.parts:
            item.parts.append(whole)
        else:
            need(
                "".join(item.parts) == whole,
                f"the arguments of {item.call_id[:100]!r} in their done event differ from "
                "their deltas joined",
            )

    def _done(self, event: dict) -> None:
        item = event.get("item")
        need(isinstance(item, dict), f"output_item.done: 'item' is {kind(item)}")
        key = self._key(event, item)
        known = self.items.get(key)
        need(known is not None, f"output_item.done for item {key!r}, which was never added")
        if known.type == "function_call":
            same = item.get("call_id") in (None, known.call_id)
            need(
                same and item.get("name") in (None, known.name),
                f"function_call {key!r} changes its call_id or name when done",
            )
        elif known.whole is not None:
            known.whole = item

    def _end(self, event: dict, kind_: str) -> None:
        response = event.get("response")
        need(isinstance(response, dict), f"{kind_}: 'response' is {kind(response)}")
        self.ended = kind_
        if kind_ != CLEAN_END:
            details = response.get("incomplete_details") or {}
            reason = details.get("reason") if isinstance(details, dict) else None
            need(reason is None or isinstance(reason, str), f"the reason is {kind(reason)}")
            self.reason = reason or "unknown"

    def calls_so_far(self) -> list[tuple[str, str, str]]:
        """``(call_id, name, arguments' JSON text so far)`` of each call, in the order added."""
        return [
            (item.call_id, item.name, "".join(item.parts))
            for item in self.items.values()
            if item.type == "function_call"
        ]

    def unfinished(self) -> str | None:
        """Why the reply has not finished cleanly (so far), or None when it has."""
        if self.ended is None:
            return "the stream ended before response.completed"
        if self.ended == CLEAN_END:
            return None
        if self.reason == "max_output_tokens":
            return (
                "the reply was cut by the output-length limit "
                "(incomplete_details.reason 'max_output_tokens')"
            )
        return f"the reply ended incomplete (incomplete_details.reason {self.reason!r})"

    def turn(self) -> Turn:
        problem, unfinished = self.problem, self.unfinished()
        output, texts, calls = [], [], []
        for item in self.items.values():
            if item.type == "message":
                text = "".join("".join(pieces) for _, (_, pieces) in sorted(item.content.items()))
                texts.append(text)
                if text:
                    output.append({"role": "assistant", "content": text})
            elif item.type == "function_call":
                arguments = "".join(item.parts)
                output.append(
                    {
                        "type": "function_call",
                        "call_id": item.call_id,
                        "name": item.name,
                        "arguments": arguments,
                    }
                )
                calls.append((item.call_id, item.name, arguments))
            else:
                output.append(item.whole)
        parsed = []
        if problem is None and unfinished is None:  # complete: now the arguments are JSON
            try:
                parsed = [
                    ToolCall(call_id, name, parse_arguments(text, f"call {call_id!r} ({name!r})"))
                    for call_id, name, text in calls
                ]
            except Malformed as exc:
                problem, parsed = f"at the end of the reply: {exc}", []
        done_reason = None
        if self.ended is not None:
            done_reason = "completed" if self.ended == CLEAN_END else self.reason
        return Turn(
            freeze({"role": "assistant", "output": output}),
            "".join(texts),
            parsed,
            self.ended is not None,
            done_reason,
            problem,
            unfinished,
            self.chunks,
        )


def function_call_output(call: ToolCall, result: object) -> Message:
    """The item that carries one call's result back (the Responses API's shape)."""
    return {"type": "function_call_output", "call_id": call.id, "output": json.dumps(result)}


class OpenAIResponses:
    """OpenAI's Responses API: typed server-sent events about output items, a call's
    arguments in deltas, ``response.completed`` at the end; each result goes back as a
    ``function_call_output`` item naming the call's ``call_id``."""

    name = "openai-responses"
    reply_role = "assistant"

    def assembler(self) -> ResponsesAssembler:
        return ResponsesAssembler()

    def tool_results(self, calls: list[ToolCall], results: list) -> list[Message]:
        return [function_call_output(call, result) for call, result in zip(calls, results)]

    def tool_schema(self, name: str, description: str, parameters: dict) -> dict:
        """A flat ``{"type": "function", "name", ...}``: no ``function`` wrapper, as in Chat
        Completions, and ``strict`` false (a strict schema would need every property
        required and no other keys)."""
        problem = OPENAI.tool_name_problem(name)
        if problem:
            raise ValueError(problem)
        return {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": False,
        }

    def tool_name_problem(self, name: str) -> str | None:
        return OPENAI.tool_name_problem(name)  # OpenAI's rule for names, in both its APIs

    # The loop's messages in this format: the system prompt and the task as messages with a
    # role; each turn one assistant message whose ``output`` holds its items (text as
    # ``content``, calls as ``function_call`` items, ``reasoning`` items whole); each result
    # a ``function_call_output`` item, with no role.

    def sizes(self, message: Message) -> dict[str, int]:
        if message.get("type") == "function_call_output":
            return {"tool": len(text_of(message.get("output")))}
        role, items = message.get("role"), message.get("output")
        if not isinstance(items, list):
            return {role: text_length(message.get("content"))}
        sizes = {role: 0, "thinking": 0, "tool_calls": 0}
        for item in items:
            kind_ = item.get("type") if isinstance(item, dict) else None
            if kind_ == "function_call":
                call = {"name": item.get("name"), "arguments": item.get("arguments")}
                sizes["tool_calls"] += len(json.dumps(call, default=str))
            elif kind_ == "reasoning":
                sizes["thinking"] += text_length(item.get("summary"))
                sizes["thinking"] += len(str(item.get("encrypted_content") or ""))
            elif isinstance(item, dict) and kind_ in (None, "message"):
                sizes[role] += text_length(item.get("content"))
            else:
                sizes[role] += len(json.dumps(item, default=str))
        return sizes

    def calls_in(self, message: Message) -> list[CallRef]:
        items = message.get("output") if message.get("role") == "assistant" else None
        return [
            CallRef(item.get("call_id"), item.get("name"))
            for item in (items if isinstance(items, list) else ())
            if isinstance(item, dict) and item.get("type") == "function_call"
        ]

    def results_in(self, message: Message) -> list[ResultRef]:
        if message.get("type") != "function_call_output":
            return []
        return [ResultRef(message.get("call_id"), None, text_of(message.get("output")))]

    def with_results(self, message: Message, contents: list[str]) -> Message:
        return {**message, "output": contents[0]} if contents else dict(message)


FORMAT = OpenAIResponses()
