"""OpenAI's Responses API on loopback, answering from a recording in its wire format.

``POST /v1/responses`` streamed as named server-sent events (each recorded event as it was
kept; the stream simply ends, with no ``[DONE]``), or one ``response`` object when the
request does not ask for ``"stream": true``; ``GET /v1/models`` and ``/v1/models/{id}`` and
the error bodies are Chat Completions' (``openai_server.py``). The official ``openai`` SDK's
``client.responses.create(stream=True)``, ``client.responses.stream()`` and
``client.responses.create()`` run against it unmodified, with ``base_url`` set to
``<url>/v1``.

It keeps nothing between requests, as Ollama's ``/v1/responses`` does: a request must carry
the whole conversation in ``input``, and one naming a ``previous_response_id`` is refused.
Before comparing, the request is read back into the loop's shape (:func:`conversation_of`):
``instructions`` as a system message in front, each turn's output items under one
assistant message, and the spellings the API treats as the same made one (a string and a
list of one text part, an item with or without the ``id`` and ``status`` a server gave it,
empty ``annotations`` and ``logprobs``). A body that is not the shape the API reads
(:data:`CHAT_REQUEST`) is refused with 400.
"""

from __future__ import annotations

from ..settings import DEFAULT_MODELS
from .openai_server import OpenAIHandler
from .replay_handler import Refusal
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
from .responses_chunks import response_object, responses_event
from .sse_handler import SSEHandler

#: What the Responses API reads of a request, and of what kinds.
CHAT_REQUEST = an_object(
    model=required(STRING, "Missing required parameter: 'model'."),
    input=required(
        one_of(
            STRING,
            array_of(
                an_object(
                    "an input item",
                    type=STRING,
                    role=STRING,
                    content=one_of(STRING, ARRAY),
                    call_id=STRING,
                    name=STRING,
                    arguments=STRING,
                    output=one_of(STRING, ARRAY),
                )
            ),
        ),
        "Missing required parameter: 'input'.",
    ),
    instructions=STRING,
    tools=array_of(
        an_object("a tool object", type=STRING, name=required(STRING, "{owner} has no name"))
    ),
    stream=BOOLEAN,
    store=BOOLEAN,
    temperature=NUMBER,
    top_p=NUMBER,
    max_output_tokens=INTEGER,
    include=ARRAY,
    tool_choice=one_of(STRING, OBJECT),
    parallel_tool_calls=BOOLEAN,
    previous_response_id=STRING,
)
#: The events that end a reply.
ENDINGS = ("response.completed", "response.incomplete", "response.failed")
#: Items a model writes: in a request, a run of them is one assistant turn.
OUTPUT_TYPES = ("function_call", "reasoning")
TEXT_PARTS = ("input_text", "output_text")
EMPTY_BY_DEFAULT = ("annotations", "logprobs")  # a text part's fields a server fills with []


def canonical_item(item: dict) -> dict:
    """An input item in the one spelling the loop keeps: what the API treats as the same
    (fields a server filled in, a list of one text part) written one way."""
    kind = item.get("type")
    if kind in (None, "message") and "role" in item:
        content = item.get("content")
        if isinstance(content, list):
            parts = [
                {k: v for k, v in part.items() if not (k in EMPTY_BY_DEFAULT and v == [])}
                if isinstance(part, dict)
                else part
                for part in content
            ]
            single = parts[0] if len(parts) == 1 and isinstance(parts[0], dict) else {}
            text = single.get("text")
            simple = single.get("type") in TEXT_PARTS and set(single) == {"type", "text"}
            content = text if simple and isinstance(text, str) else parts
        return {"role": item["role"], "content": content}
    if kind == "function_call":
        return {k: item[k] for k in ("type", "call_id", "name", "arguments") if k in item}
    if kind == "function_call_output":
        output = item.get("output")
        if isinstance(output, list) and len(output) == 1 and isinstance(output[0], dict):
            if output[0].get("type") in TEXT_PARTS and isinstance(output[0].get("text"), str):
                output = output[0]["text"]
        return {"type": kind, "call_id": item.get("call_id"), "output": output}
    return item


def _is_output(item: dict) -> bool:
    return item.get("type") in OUTPUT_TYPES or (
        item.get("role") == "assistant" and item.get("type") in (None, "message")
    )


def conversation_of(body: dict) -> list:
    """A Responses request's conversation in the loop's shape: ``instructions`` first as a
    system message, every item canonical, each run of output items one assistant message."""
    items = body["input"]
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    instructions = body.get("instructions")
    messages = [{"role": "system", "content": instructions}] if instructions else []
    for item in items:
        item = canonical_item(item)
        if not _is_output(item):
            messages.append(item)
        elif messages and messages[-1].get("role") == "assistant" and "output" in messages[-1]:
            messages[-1]["output"].append(item)
        else:
            messages.append({"role": "assistant", "output": [item]})
    return messages


class ResponsesHandler(SSEHandler):
    """The Responses API's routes. What it shares with Chat Completions (the key, the error
    bodies and request ids, the model list) is ``OpenAIHandler``'s, taken by name: the rest of
    that handler (usage chunks, a whole capture streamed, its spellings) is Chat's alone."""

    post_routes = {"/v1/responses": "chat"}
    chat_request = CHAT_REQUEST
    stream_end = b""  # the stream ends with response.completed; there is no [DONE]
    garbage = b'event: response.output_text.delta\ndata: {"type": "response.output_te\n\n'
    default_model = DEFAULT_MODELS["openai-responses"]
    event = staticmethod(responses_event)
    request_id_header = OpenAIHandler.request_id_header
    bad_key = OpenAIHandler.bad_key
    sent_key = OpenAIHandler.sent_key
    error_body = OpenAIHandler.error_body
    missing_model = OpenAIHandler.missing_model
    model_list = OpenAIHandler.model_list
    model_entry = OpenAIHandler.model_entry

    @staticmethod
    def final(chunk: dict) -> bool:
        return chunk.get("type") in ENDINGS

    def stream_error(self, text: str) -> bytes:
        error = {"type": "error", "code": "server_error", "message": text, "param": None}
        return self.event(error).encode() + b"\n\n"

    def conversation(self, body: dict) -> tuple[list, list]:
        if body.get("previous_response_id"):
            raise Refusal(
                400,
                "previous_response_id is not supported: this server keeps no responses "
                "(as Ollama's /v1/responses); send the whole conversation in 'input'",
            )
        return conversation_of(body), [tool.get("name") for tool in body.get("tools") or []]

    def whole_reply(self, turn, positions, body) -> dict:
        """One ``response``: the one the recorded stream ended with, or (a stream cut short)
        the items it finished, still ``in_progress``."""
        events = [turn["chunks"][index]["chunk"] for index in positions]
        ended = [event for event in events if event.get("type") in ENDINGS]
        if ended:
            return ended[-1]["response"]
        created = next(
            (e["response"] for e in events if e.get("type") == "response.created"),
            response_object("resp_replay"),
        )
        done = [e["item"] for e in events if e.get("type") == "response.output_item.done"]
        return {**created, "status": "in_progress", "output": done}
