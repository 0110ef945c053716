"""Anthropic's Messages API on loopback, answering from a recording in its wire format.

``POST /v1/messages`` streamed as named server-sent events (``event:`` then ``data:``), or
one ``message`` object; ``GET /v1/models`` and ``/v1/models/{id}``; errors as ``{"type":
"error", "error": {"type", "message"}}``. The official ``anthropic`` SDK runs against it
unmodified, with ``base_url`` set to the server. A request is compared with the recorded
one as the loop sent it: the ``system`` parameter goes back in front of the messages, where
the loop keeps it. A body that is not the shape the Messages API reads
(:data:`CHAT_REQUEST`) is refused with 400. What every server-sent-event API shares is
``sse_handler.py``'s.
"""

from __future__ import annotations

import json

from ..harness.formats import FORMATS
from ..settings import DEFAULT_MODELS
from .go_json import go_time
from .request_shape import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    an_object,
    array_of,
    one_of,
    required,
)
from .sse import anthropic_event
from .sse_handler import SSEHandler

#: What the Messages API reads of a request, and of what kinds.
CHAT_REQUEST = an_object(
    model=required(STRING),
    max_tokens=required(INTEGER),
    messages=required(
        array_of(
            an_object(
                role=required(
                    STRING,
                    "{where}: Input should be 'user' or 'assistant'",
                    values=("user", "assistant"),
                ),
                content=one_of(
                    STRING,
                    array_of(
                        an_object(
                            "a content block",
                            type=required(STRING, "{owner} is not a content block"),
                        )
                    ),
                ),
            )
        )
    ),
    system=one_of(STRING, ARRAY),
    tools=array_of(an_object("a tool object", name=required(STRING, "{owner} has no tool name"))),
    stream=BOOLEAN,
    temperature=NUMBER,
)


class AnthropicHandler(SSEHandler):
    """Anthropic's Messages routes."""

    chat_route = "/v1/messages"
    chat_request = CHAT_REQUEST
    garbage = b'event: content_block_delta\ndata: {"type": "cut\n\n'
    default_model = DEFAULT_MODELS["anthropic"]
    bad_key = "invalid x-api-key"
    event = staticmethod(anthropic_event)

    @staticmethod
    def final(chunk: dict) -> bool:
        return chunk.get("type") == "message_stop"

    def sent_key(self) -> str:
        # the API reads x-api-key; the pinned SDK sends its api_key as a bearer token
        bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        return self.headers.get("x-api-key") or bearer

    def error_body(self, status: int, text: str) -> dict:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            413: "request_too_large",
            429: "rate_limit_error",
        }.get(status, "invalid_request_error" if status < 500 else "api_error")
        return {"type": "error", "error": {"type": kind, "message": text}}

    def missing_model(self, name: str) -> str:
        return f"model: {name}"

    def conversation(self, body: dict) -> tuple[list, list]:
        """The messages as the loop sent them: the ``system`` parameter first again."""
        system = body.get("system")
        front = [{"role": "system", "content": system}] if system else []
        return front + body["messages"], [tool.get("name") for tool in body.get("tools") or []]

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
        """One ``message``: the recorded events folded into the object they describe."""
        events = [turn["chunks"][index]["chunk"] for index in positions]
        assembler = FORMATS["anthropic"].assembler()
        for event in events:
            assembler.add(event)
        start = next((e.get("message") for e in events if e.get("type") == "message_start"), {})
        content = []
        for _, block in sorted(assembler.blocks.items()):
            joined = "".join(block.parts)
            if block.type == "text":
                content.append({"type": "text", "text": joined})
            else:
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.id,
                        "name": block.name,
                        "input": _json_object(joined, block.start_input),
                    }
                )
        return {
            **start,
            "content": content,
            "stop_reason": assembler.stop_reason,
            "stop_sequence": None,
        }


def _json_object(text: str, default):
    """A tool's input from its joined JSON text; what its block started with if it is not JSON."""
    try:
        return json.loads(text) if text else default
    except ValueError:
        return default
