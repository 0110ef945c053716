"""OpenAI's Chat Completions API on loopback, answering from a recording in its wire format.

``POST /v1/chat/completions`` streamed as server-sent events (each recorded event as it was
kept, then ``data: [DONE]``), or one ``chat.completion`` object when the request does not
ask for ``"stream": true``; ``GET /v1/models`` and ``/v1/models/{id}``; errors as
``{"error": {"message", "type", "param", "code"}}``. The official ``openai`` SDK runs
against it unmodified, with ``base_url`` set to ``<url>/v1``. A chat request whose body is
not the shape Chat Completions reads (:data:`CHAT_REQUEST`) is refused with 400; in
strict mode one that differs from the recorded request gets a 400 naming the difference,
and uses up no turn. What every server-sent-event API shares is ``sse_handler.py``'s.
"""

from __future__ import annotations

from ..harness.formats import FORMATS
from ..settings import DEFAULT_MODELS
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
)
from .sse import OPENAI_DONE, openai_event
from .sse_handler import SSEHandler

#: What Chat Completions reads of a request, and of what kinds.
CHAT_REQUEST = an_object(
    model=required(STRING, "you must provide a model parameter"),
    messages=required(
        array_of(
            an_object(
                role=STRING,
                content=one_of(STRING, ARRAY),
                tool_calls=array_of(
                    an_object(
                        id=STRING,
                        type=STRING,
                        function=an_object(name=STRING, arguments=STRING),
                    )
                ),
                tool_call_id=STRING,
                name=STRING,
            )
        ),
        "'messages' is a required property",
    ),
    tools=array_of(
        an_object(
            "a tool object",
            function=required(
                an_object(name=required(STRING, "{owner} has no name")),
                "{owner} has no function name",
            ),
        )
    ),
    stream=BOOLEAN,
    stream_options=OBJECT,
    temperature=NUMBER,
    seed=INTEGER,
    max_tokens=INTEGER,
    max_completion_tokens=INTEGER,
)


class OpenAIHandler(SSEHandler):
    """OpenAI's Chat Completions routes."""

    chat_route = "/v1/chat/completions"
    chat_request = CHAT_REQUEST
    stream_end = OPENAI_DONE.encode() + b"\n\n"
    garbage = b'data: {"id": "chatcmpl-cut\n\n'
    default_model = DEFAULT_MODELS["openai"]
    bad_key = "Incorrect API key provided. You can find your API key in your server's settings."
    event = staticmethod(openai_event)

    @staticmethod
    def final(chunk: dict) -> bool:
        return any(
            isinstance(choice, dict) and choice.get("finish_reason")
            for choice in chunk.get("choices") or []
        )

    def sent_key(self) -> str:
        return (self.headers.get("Authorization") or "").removeprefix("Bearer ")

    def error_body(self, status: int, text: str) -> dict:
        kind = {401: "invalid_request_error", 404: "invalid_request_error"}.get(
            status, "invalid_request_error" if status < 500 else "server_error"
        )
        code = {401: "invalid_api_key", 404: "model_not_found"}.get(status)
        return {"error": {"message": text, "type": kind, "param": None, "code": code}}

    def missing_model(self, name: str) -> str:
        return f"The model `{name}` does not exist or you do not have access to it."

    def conversation(self, body: dict) -> tuple[list, list]:
        return body["messages"], [
            (tool.get("function") or {}).get("name") for tool in body.get("tools") or []
        ]

    def model_list(self, entries: list) -> dict:
        return {"object": "list", "data": entries}

    def model_entry(self, name: str) -> dict:
        return {
            "id": name,
            "object": "model",
            "created": int(self.replay.modified.timestamp()),
            "owned_by": "labkit-replay (a recording, not a model)",
        }

    def whole_reply(self, turn, positions, body) -> dict:
        """One ``chat.completion``: the recorded one, or the recorded chunks folded into one."""
        chunks = [turn["chunks"][index]["chunk"] for index in positions]
        if len(chunks) == 1 and chunks[0].get("object") == "chat.completion":
            return chunks[0]
        assembler = FORMATS["openai"].assembler()
        for chunk in chunks:
            assembler.add(chunk)
        text = "".join(assembler.content)
        message = {"role": "assistant", "content": text or None}
        if assembler.calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": "".join(call.parts)},
                }
                for _, call in sorted(assembler.calls.items())
            ]
        first = chunks[0] if chunks else {}
        return {
            "id": first.get("id", "chatcmpl-replay"),
            "object": "chat.completion",
            "created": first.get("created", 0),
            "model": first.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": assembler.finish_reason,
                }
            ],
        }
