"""OpenAI's Chat Completions API on loopback, answering from a recording in its wire format.

``POST /v1/chat/completions`` streamed as server-sent events (each recorded event as it was
kept, then ``data: [DONE]``), or one ``chat.completion`` object when the request does not
ask for ``"stream": true``; ``GET /v1/models`` and ``/v1/models/{id}``; errors as
``{"error": {"message", "type", "param", "code"}}``; an ``x-request-id`` on every answer.
The official ``openai`` SDK runs against it unmodified, with ``base_url`` set to
``<url>/v1``. A chat request whose body is not the shape Chat Completions reads
(:data:`CHAT_REQUEST`) is refused with 400; in strict mode one that differs from the
recorded request gets a 400 naming the difference, and uses up no turn.

As the API does:

- a turn captured whole (``stream: false``) streams, when asked, as the chunks the API
  would send for it (``chunks.openai_chunks_of``);
- ``stream_options.include_usage`` adds the usage chunk (``choices: []``) before
  ``[DONE]``, and ``"usage": null`` to every other chunk; a whole reply carries ``usage``.
  The counts are the recording's when it holds them, else estimated (``usage.py``);
- a whole reply's message carries ``refusal: null`` and ``annotations: []``;
- in strict comparison, a ``content`` given as a string or as a list of one text part is
  the same, and so are a field set to null and a field left out, and a field the API does
  not read is no difference (:func:`canonical_messages`).

What every server-sent-event API shares is ``sse_handler.py``'s.
"""

from __future__ import annotations

from ..harness.formats import FORMATS
from ..settings import DEFAULT_MODELS
from .chunks import openai_chunk, openai_chunks_of
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
from .usage import estimated_reply_tokens, estimated_tokens

#: A message's content: text, or a list of parts (``{"type": "text", "text": ...}``...).
CONTENT = one_of(
    STRING,
    array_of(
        an_object(
            "a content part",
            type=required(STRING, "{owner} has no type"),
            text=STRING,
            image_url=OBJECT,
            refusal=STRING,
        )
    ),
)

#: What Chat Completions reads of a request, and of what kinds.
CHAT_REQUEST = an_object(
    model=required(STRING, "you must provide a model parameter"),
    messages=required(
        array_of(
            an_object(
                role=STRING,
                content=CONTENT,
                tool_calls=array_of(
                    an_object(
                        "a tool call",
                        id=STRING,
                        type=STRING,
                        function=an_object(name=STRING, arguments=STRING),
                    )
                ),
                tool_call_id=STRING,
                name=STRING,
                refusal=STRING,
                annotations=ARRAY,
            )
        ),
        "'messages' is a required property",
    ),
    tools=array_of(
        an_object(
            "a tool object",
            type=STRING,
            function=required(
                an_object(
                    name=required(STRING, "{owner} has no name"),
                    description=STRING,
                    parameters=OBJECT,
                    strict=BOOLEAN,
                ),
                "{owner} has no function name",
            ),
        )
    ),
    tool_choice=one_of(STRING, OBJECT),
    parallel_tool_calls=BOOLEAN,
    stream=BOOLEAN,
    stream_options=an_object(include_usage=BOOLEAN),
    temperature=NUMBER,
    top_p=NUMBER,
    seed=INTEGER,
    n=INTEGER,
    max_tokens=INTEGER,
    max_completion_tokens=INTEGER,
    stop=one_of(STRING, ARRAY),
    presence_penalty=NUMBER,
    frequency_penalty=NUMBER,
    logprobs=BOOLEAN,
    response_format=OBJECT,
    user=STRING,
    metadata=OBJECT,
)


#: The fields of a message the API reads (a tool call's, and its function's): others, such
#: as the ``index`` and ``parsed_arguments`` the SDK's stream helper leaves on a tool call it
#: assembled, are no part of the conversation.
MESSAGE_FIELDS = ("role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio")
MESSAGE_FIELDS += ("function_call",)  # the legacy call, which the API still reads
CALL_FIELDS = ("id", "type", "function")
FUNCTION_FIELDS = ("name", "arguments")


def canonical_messages(messages: list) -> list:
    """The messages written one way of the ways Chat Completions reads alike: only the
    fields it reads (:data:`MESSAGE_FIELDS`), none set to null (null and left out are the
    same), and a ``content`` that is a list of one text part written as its text (the API
    reads ``[{"type": "text", "text": "x"}]`` and ``"x"`` alike, for every role)."""
    return [_canonical(message) for message in messages]


def _canonical(message):
    if not isinstance(message, dict):
        return message
    written = _fields(message, MESSAGE_FIELDS)
    if isinstance(written.get("tool_calls"), list):
        written["tool_calls"] = [
            {**_fields(call, CALL_FIELDS), "function": _fields(call["function"], FUNCTION_FIELDS)}
            if isinstance(call, dict) and isinstance(call.get("function"), dict)
            else call
            for call in written["tool_calls"]
        ]
    if _one_text_part(written.get("content")):
        written["content"] = written["content"][0]["text"]
    return written


def _fields(value: dict, names: tuple) -> dict:
    return {k: v for k, v in value.items() if k in names and v is not None}


def _one_text_part(content) -> bool:
    return (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and set(content[0]) == {"type", "text"}
        and content[0]["type"] == "text"
        and isinstance(content[0]["text"], str)
    )


class OpenAIHandler(SSEHandler):
    """OpenAI's Chat Completions routes."""

    post_routes = {"/v1/chat/completions": "chat"}
    chat_request = CHAT_REQUEST
    stream_end = OPENAI_DONE.encode() + b"\n\n"
    garbage = b'data: {"id": "chatcmpl-cut\n\n'
    request_id_header = "x-request-id"
    default_model = DEFAULT_MODELS["openai"]
    bad_key = "Incorrect API key provided. You can find your API key in your server's settings."
    event = staticmethod(openai_event)
    canonical_messages = staticmethod(canonical_messages)

    @staticmethod
    def final(chunk: dict) -> bool:
        return any(
            isinstance(choice, dict) and choice.get("finish_reason")
            for choice in chunk.get("choices") or []
        )

    @classmethod
    def streamed_chunks(cls, turn: dict) -> list:
        """A turn captured whole streams as the chunks the API sends for it."""
        chunks = turn["chunks"]
        if len(chunks) == 1 and _whole(chunks[0]["chunk"]):
            at = chunks[0]["at"]
            return [{"at": at, "chunk": chunk} for chunk in openai_chunks_of(chunks[0]["chunk"])]
        return chunks

    def sent_key(self) -> str:
        return (self.headers.get("Authorization") or "").removeprefix("Bearer ")

    def error_body(self, status: int, text: str) -> dict:
        kind = {401: "invalid_request_error", 404: "invalid_request_error"}.get(
            status, "invalid_request_error" if status < 500 else "server_error"
        )
        code = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}.get(
            status
        )
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

    # --- usage, as the API reports it ------------------------------------------------------

    @staticmethod
    def wants_usage(body: dict) -> bool:
        options = body.get("stream_options")
        return isinstance(options, dict) and options.get("include_usage") is True

    def stream_line(self, entry: dict, line: bytes, body: dict) -> bytes:
        """With ``include_usage``, every chunk says ``"usage": null`` (the recorded bytes
        otherwise unchanged)."""
        if not self.wants_usage(body) or "usage" in entry["chunk"]:
            return line
        end = line.rindex(b"}")
        return line[:end] + b',"usage":null' + line[end:]

    def stream_extra(self, turn: dict, entries: list, positions: list, body: dict) -> bytes:
        """With ``include_usage``, the usage chunk, unless the recorded stream has one."""
        if not self.wants_usage(body) or any(_usage_of(e["chunk"]) for e in entries):
            return b""
        chunks = [entries[index]["chunk"] for index in positions]
        first = chunks[0] if chunks else {}
        usage_chunk = openai_chunk(
            model=first.get("model", ""),
            chunk_id=first.get("id", "chatcmpl-replay"),
            created=first.get("created", 0),
        )
        usage_chunk["choices"] = []
        usage_chunk["usage"] = self.usage(turn, chunks, body)
        return self.event(usage_chunk).encode() + b"\n\n"

    def usage(self, turn: dict, chunks: list, body: dict) -> dict:
        """The reply's token counts: the recording's, else estimated from the recorded request
        and the reply's text and arguments."""
        for entry in reversed(turn["chunks"]):
            recorded = _usage_of(entry["chunk"])
            if recorded:
                return recorded
        assembler = _folded(chunks)  # estimated from the recorded request: the same however sent
        prompt = estimated_tokens(turn["request"]["messages"], body.get("tools") or [])
        completion = estimated_reply_tokens(
            *assembler.content, *["".join(call.parts) for call in assembler.calls.values()]
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    # --- a whole reply --------------------------------------------------------------------

    def whole_reply(self, turn, positions, body) -> dict:
        """One ``chat.completion``: the recorded one, or the recorded chunks folded into one."""
        chunks = [turn["chunks"][index]["chunk"] for index in positions]
        if len(chunks) == 1 and _whole(chunks[0]):
            return chunks[0]
        assembler = _folded(chunks)
        text = "".join(assembler.content)
        message = {"role": "assistant", "content": text or None, "refusal": None}
        if assembler.calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": "".join(call.parts)},
                }
                for _, call in sorted(assembler.calls.items())
            ]
        message["annotations"] = []
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
            "usage": self.usage(turn, chunks, body),
        }


def _whole(chunk: dict) -> bool:
    return chunk.get("object") == "chat.completion"


def _usage_of(chunk: dict) -> dict | None:
    usage = chunk.get("usage")
    return usage if isinstance(usage, dict) and usage else None


def _folded(chunks: list):
    """The harness's assembler, after folding ``chunks`` in (what a reply held)."""
    assembler = FORMATS["openai"].assembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler
