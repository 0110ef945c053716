"""Anthropic's Messages API on loopback, answering from a recording in its wire format.

``POST /v1/messages`` streamed as named server-sent events (``event:`` then ``data:``), or
one ``message`` object; ``POST /v1/messages/count_tokens``; ``GET /v1/models`` and
``/v1/models/{id}``; errors as ``{"type": "error", "error": {"type", "message"},
"request_id"}``, with a ``request-id`` header on every answer. The official ``anthropic``
SDK runs against it unmodified, with ``base_url`` set to the server. A request is compared
with the recorded one as the loop sent it: the ``system`` parameter goes back in front of
the messages, where the loop keeps it. A body that is not the shape the Messages API reads
(:data:`CHAT_REQUEST`) is refused with 400.

As the API does:

- a request without an ``anthropic-version`` header, or with one that is not a date, is
  refused with the API's 400; the key may come as ``x-api-key`` or as a bearer token (the
  SDKs send one or the other, by version);
- a whole reply keeps every content block, ``thinking`` blocks with their ``signature``
  included, and its ``usage`` is the streamed one's at the end (``message_delta``'s counts
  are cumulative);
- ``count_tokens`` answers the ``input_tokens`` the recording's reply to that request
  reported, else an estimate (``usage.py``);
- a 529 is an ``overloaded_error``; the ``pings`` option sends ``ping`` events;
- strict comparison treats as the same what the API does (:func:`canonical_messages`).

What every server-sent-event API shares is ``sse_handler.py``'s.
"""

from __future__ import annotations

import json
import re

from ..harness.formats import FORMATS
from ..settings import DEFAULT_MODELS
from .go_json import go_time
from .replay import first_difference
from .request_shape import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    NUMBER,
    OBJECT,
    STRING,
    an_object,
    array_of,
    one_of,
    required,
    shape_problem,
)
from .sse import anthropic_event
from .sse_handler import SSEHandler
from .usage import estimated_tokens

#: A content block of any type, with every field a block of some type holds.
BLOCK = an_object(
    "a content block",
    type=required(STRING, "{owner} is not a content block"),
    text=STRING,
    id=STRING,
    name=STRING,
    input=OBJECT,
    tool_use_id=STRING,
    content=one_of(STRING, ARRAY),
    is_error=BOOLEAN,
    thinking=STRING,
    signature=STRING,
    data=STRING,
    source=OBJECT,
    cache_control=OBJECT,
)
TOOLS = array_of(
    an_object(
        "a tool object",
        name=required(STRING, "{owner} has no tool name"),
        description=STRING,
        input_schema=OBJECT,
    )
)
MESSAGES = array_of(
    an_object(
        role=required(
            STRING,
            "{where}: Input should be 'user' or 'assistant'",
            values=("user", "assistant"),
        ),
        content=one_of(STRING, array_of(BLOCK)),
    )
)
SYSTEM = one_of(STRING, array_of(BLOCK))

#: What the Messages API reads of a request, and of what kinds.
CHAT_REQUEST = an_object(
    model=required(STRING),
    max_tokens=required(INTEGER),
    messages=required(MESSAGES),
    system=SYSTEM,
    tools=TOOLS,
    tool_choice=OBJECT,
    thinking=OBJECT,
    stream=BOOLEAN,
    temperature=NUMBER,
    top_p=NUMBER,
    top_k=INTEGER,
    stop_sequences=array_of(STRING),
    metadata=OBJECT,
)
#: What ``count_tokens`` reads: a chat request without ``max_tokens`` or ``stream``.
COUNT_REQUEST = an_object(
    model=required(STRING),
    messages=required(MESSAGES),
    system=SYSTEM,
    tools=TOOLS,
    tool_choice=OBJECT,
    thinking=OBJECT,
)
#: What the API names each error status.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
VERSION = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def canonical_messages(messages: list) -> list:
    """The messages written one way of the ways the Messages API reads alike: a list of one
    plain text block is its text (``system`` included: the API documents a string as that
    list's shorthand), in a ``tool_result``'s content too; a ``tool_result``'s ``"is_error":
    false`` is no ``is_error``; a block's field set to null is a field left out (never
    inside a tool's ``input``); consecutive ``user`` (or ``assistant``) messages are one
    message holding both's blocks (the API combines them)."""
    written = []
    for message in messages:
        if not isinstance(message, dict):
            written.append(message)
            continue
        before = written[-1] if written else None
        if (
            isinstance(before, dict)
            and message.get("role") in ("user", "assistant")
            and before.get("role") == message.get("role")
            and isinstance(before.get("content"), (str, list))
            and isinstance(message.get("content"), (str, list))
        ):
            blocks = _as_blocks(before["content"]) + _as_blocks(message["content"])
            written[-1] = {**before, "content": blocks}
        else:
            written.append(dict(message))
    for message in written:
        if isinstance(message, dict) and "content" in message:
            message["content"] = _plain(message["content"])
    return written


def _as_blocks(content) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _plain(content):
    """Content written one way: one plain text block as its text, tool results alike."""
    if not isinstance(content, list):
        return content
    blocks = []
    for block in content:
        if isinstance(block, dict):
            block = {k: v for k, v in block.items() if v is not None}
            if block.get("type") == "tool_result":
                block = {k: v for k, v in block.items() if (k, v) != ("is_error", False)}
                if "content" in block:
                    block["content"] = _plain(block["content"])
        blocks.append(block)
    if len(blocks) == 1 and isinstance(blocks[0], dict) and set(blocks[0]) == {"type", "text"}:
        if blocks[0]["type"] == "text" and isinstance(blocks[0]["text"], str):
            return blocks[0]["text"]
    return blocks


class AnthropicHandler(SSEHandler):
    """Anthropic's Messages routes."""

    post_routes = {"/v1/messages": "chat", "/v1/messages/count_tokens": "count_tokens"}
    chat_request = CHAT_REQUEST
    garbage = b'event: content_block_delta\ndata: {"type": "cut\n\n'
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    request_id_header = "request-id"
    default_model = DEFAULT_MODELS["anthropic"]
    bad_key = "invalid x-api-key"
    event = staticmethod(anthropic_event)
    canonical_messages = staticmethod(canonical_messages)

    @staticmethod
    def final(chunk: dict) -> bool:
        return chunk.get("type") == "message_stop"

    def sent_key(self) -> str:
        # the API reads x-api-key; the pinned SDKs send their api_key as a bearer token
        bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        return self.headers.get("x-api-key") or bearer

    def header_problem(self) -> str | None:
        version = self.headers.get("anthropic-version")
        if version is None:
            return "anthropic-version: header is required"
        if not VERSION.fullmatch(version.strip()):
            return f"anthropic-version: {json.dumps(version[:40])} is not a valid version"
        return None

    def error_body(self, status: int, text: str) -> dict:
        kind = ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": text},
            "request_id": self.request_id,
        }

    def missing_model(self, name: str) -> str:
        return f"model: {name}"

    def conversation(self, body: dict) -> tuple[list, list]:
        """The messages as the loop sent them: the ``system`` parameter first again."""
        system = body.get("system")
        front = [{"role": "system", "content": system}] if system else []
        return front + body["messages"], [tool.get("name") for tool in body.get("tools") or []]

    def count_tokens(self) -> None:
        """``input_tokens`` for a request: what the recording's reply to the same request
        said, else an estimate."""
        body = self.read_json()
        problem = shape_problem(body, COUNT_REQUEST)
        if problem:
            return self.send_json_error(400, problem)
        if not self.replay.serves(body["model"]):
            return self.send_json_error(404, self.missing_model(body["model"]))
        messages, names = self.conversation(body)
        for turn in self.replay.turns:
            same = first_difference(
                turn["request"], messages, names, over_http=True, canonical=canonical_messages
            )
            start = turn["chunks"][0]["chunk"] if turn["chunks"] else {}
            tokens = ((start.get("message") or {}).get("usage") or {}).get("input_tokens")
            if same is None and isinstance(tokens, int):
                return self.send_json(200, {"input_tokens": tokens})
        self.send_json(200, {"input_tokens": estimated_tokens(messages, body.get("tools") or [])})

    def model_list(self, entries: list) -> dict:
        return {
            "data": entries,
            "has_more": False,
            "first_id": entries[0]["id"] if entries else None,
            "last_id": entries[-1]["id"] if entries else None,
        }

    def model_entry(self, name: str) -> dict:
        return {
            "type": "model",
            "id": name,
            "created_at": go_time(self.replay.modified),
            "display_name": f"{name} (labkit replay server: a recording, not a model)",
        }

    def whole_reply(self, turn, positions, body) -> dict:
        """One ``message``: the recorded events folded into the object they describe, its
        usage the last the stream reported (``message_delta``'s counts are cumulative)."""
        events = [turn["chunks"][index]["chunk"] for index in positions]
        assembler = FORMATS["anthropic"].assembler()
        usage = {}
        for event in events:
            assembler.add(event)
            if event.get("type") == "message_start":
                usage.update((event.get("message") or {}).get("usage") or {})
            elif event.get("type") == "message_delta":
                usage.update(event.get("usage") or {})
        start = next((e.get("message") for e in events if e.get("type") == "message_start"), {})
        content = []
        for _, block in sorted(assembler.blocks.items()):
            joined = "".join(block.parts)
            tool_use = block.type == "tool_use"
            content.append(
                block.content(joined, _json_object(joined, block.start_input) if tool_use else None)
            )
        return {
            **start,
            "content": content,
            "stop_reason": assembler.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }


def _json_object(text: str, default):
    """A tool's input from its joined JSON text; what its block started with if it is not JSON."""
    try:
        return json.loads(text) if text else default
    except ValueError:
        return default
