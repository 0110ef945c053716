"""OpenAI's and Anthropic's HTTP APIs on loopback, answering from a recording in their format.

Each speaks its API well enough for the official SDK (``openai``, ``anthropic``) to run
against it unmodified, with ``base_url`` set to the server (``<url>/v1`` for OpenAI,
``<url>`` for Anthropic):

- OpenAI: ``POST /v1/chat/completions`` streamed as server-sent events (each recorded
  event as it was kept, then ``data: [DONE]``), or one ``chat.completion`` object when
  the request does not ask for ``"stream": true``; ``GET /v1/models`` and
  ``/v1/models/{id}``; errors as ``{"error": {"message", "type", "param", "code"}}``.
- Anthropic: ``POST /v1/messages`` streamed as named events (``event:`` then ``data:``),
  or one ``message`` object; ``GET /v1/models`` and ``/v1/models/{id}``; errors as
  ``{"type": "error", "error": {"type", "message"}}``.

A request is compared with the recorded one as the loop sent it: for Anthropic the
``system`` parameter goes back in front of the messages, where the loop keeps it. In
strict mode a difference gets an HTTP 400 naming it, and uses up no turn. With
``api_key`` set, a request without that key gets the API's 401. The model list says
who answers: ``owned_by`` (OpenAI) and ``display_name`` (Anthropic) name the labkit
replay server, and the list carries ``labkit_replay``: the recording served and its
provenance, so a capture through it never claims a model wrote what a script did.
Everything else (threads, faults, pacing, hostile requests) is ``loopback.py``'s.
"""

from __future__ import annotations

import hmac
import json

from ..harness.formats.anthropic import AnthropicAssembler
from ..harness.formats.openai import OpenAIAssembler
from ..settings import DEFAULT_MODELS
from .go_json import go_time
from .loopback import PREFIX, Refusal, ReplayHandler, fields_problem, json_kind
from .sse import OPENAI_DONE, anthropic_event, openai_event

TEXT = "text/plain; charset=utf-8"


class SSEHandler(ReplayHandler):
    """What both APIs' servers share: a text/event-stream reply, a key, a model list."""

    stream_type = "text/event-stream; charset=utf-8"
    chat_route = ""
    event = staticmethod(lambda chunk: "")  # a chunk as the API writes its event

    @classmethod
    def wire_line(cls, entry: dict) -> bytes:
        return (entry.get("line") or cls.event(entry["chunk"])).encode() + b"\n\n"

    def stream_error(self, text: str) -> bytes:
        return self.event(self.error_body(500, text)).encode() + b"\n\n"

    def _get(self, head: bool):
        replay = self.replay
        if self.route == "/":
            return self.send_body(
                200, b"labkit replay server is running (not a model)", TEXT, head=head
            )
        if not self._authorised():
            return
        if self.route == "/v1/models":
            return self.send_json(
                200,
                {
                    **self.model_list([self.model_entry(m) for m in replay.models]),
                    "labkit_replay": replay.identity,
                },
                head,
            )
        name = self.route.removeprefix("/v1/models/")
        if name != self.route and replay.serves(name):
            return self.send_json(200, self.model_entry(name), head)
        if name != self.route:
            return self.send_json_error(404, self.missing_model(name))
        self.send_json_error(404, f"{PREFIX}no {self.command} {self.route}")

    def do_POST(self):
        if self.route != self.chat_route:
            return self.send_json_error(404, f"{PREFIX}no POST {self.route}")
        if not self._authorised():
            return
        body = self.read_json()
        replay = self.replay
        replay.chat_requests.append(body)  # the body only: a key travels in a header
        problem = self.request_problem(body)
        if problem:
            raise Refusal(400, problem)
        model = body["model"]
        if not replay.serves(model):
            return self.send_json_error(404, self.missing_model(model))
        if body.get("tools") and "tools" not in replay.capabilities:
            return self.send_json_error(400, f"{model} does not support tools")
        messages, names = self.conversation(body)
        self.answer_turn(messages, names, body, streamed=body.get("stream") is True)

    def _authorised(self) -> bool:
        """With a key set, answer a request that does not carry it with the API's 401."""
        wanted = self.replay.api_key
        if wanted is None or hmac.compare_digest(self.sent_key().encode(), wanted.encode()):
            return True
        self.send_json_error(401, self.bad_key)
        return False


# --- OpenAI -------------------------------------------------------------------------------


def openai_problem(body) -> str | None:
    """Say how a chat request body is not what Chat Completions reads, or None."""
    if not isinstance(body, dict):
        return f"the request body is a JSON {json_kind(body)}, not an object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    problem = fields_problem(
        body,
        "the request",
        {
            "messages": (list,),
            "tools": (list,),
            "stream": (bool,),
            "stream_options": (dict,),
            "temperature": (int, float),
            "seed": (int,),
            "max_tokens": (int,),
            "max_completion_tokens": (int,),
        },
    )
    if problem or not isinstance(body.get("messages"), list):
        return problem or "'messages' is a required property"
    for index, message in enumerate(body["messages"]):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            return f"{where} is a JSON {json_kind(message)}, not an object"
        problem = fields_problem(
            message,
            where,
            {
                "role": (str,),
                "content": (str, list),
                "tool_calls": (list,),
                "tool_call_id": (str,),
                "name": (str,),
            },
        )
        if problem:
            return problem
        for number, call in enumerate(message.get("tool_calls") or []):
            at = f"{where}.tool_calls[{number}]"
            if not isinstance(call, dict):
                return f"{at} is a JSON {json_kind(call)}, not an object"
            problem = fields_problem(
                call, at, {"id": (str,), "type": (str,), "function": (dict,)}
            ) or fields_problem(
                call.get("function") or {}, f"{at}.function", {"name": (str,), "arguments": (str,)}
            )
            if problem:
                return problem
    return _tools_problem(body, lambda tool: tool.get("function"), "function")


def _tools_problem(body: dict, described, where_name: str) -> str | None:
    for index, tool in enumerate(body.get("tools") or []):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            return f"{where} is a JSON {json_kind(tool)}, not a tool object"
        description = described(tool)
        if not isinstance(description, dict) or not isinstance(description.get("name"), str):
            return f"{where} has no {where_name} name"
    return None


class OpenAIHandler(SSEHandler):
    """OpenAI's Chat Completions routes."""

    chat_route = "/v1/chat/completions"
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

    request_problem = staticmethod(openai_problem)

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
        assembler = OpenAIAssembler()
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


# --- Anthropic ----------------------------------------------------------------------------


def anthropic_problem(body) -> str | None:
    """Say how a request body is not what the Messages API reads, or None."""
    if not isinstance(body, dict):
        return f"the request body is a JSON {json_kind(body)}, not an object"
    for required in ("model", "max_tokens", "messages"):
        if required not in body:
            return f"{required}: Field required"
    problem = fields_problem(
        body,
        "the request",
        {
            "model": (str,),
            "max_tokens": (int,),
            "messages": (list,),
            "system": (str, list),
            "tools": (list,),
            "stream": (bool,),
            "temperature": (int, float),
        },
    )
    if problem:
        return problem
    for index, message in enumerate(body["messages"]):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            return f"{where} is a JSON {json_kind(message)}, not an object"
        if message.get("role") not in ("user", "assistant"):
            return f"{where}.role: Input should be 'user' or 'assistant'"
        problem = fields_problem(message, where, {"content": (str, list)})
        if problem:
            return problem
        for number, block in enumerate(
            message.get("content") if isinstance(message.get("content"), list) else []
        ):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                return f"{where}.content[{number}] is not a content block"
    return _tools_problem(body, lambda tool: tool, "tool")


class AnthropicHandler(SSEHandler):
    """Anthropic's Messages routes."""

    chat_route = "/v1/messages"
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

    request_problem = staticmethod(anthropic_problem)

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
        assembler = AnthropicAssembler()
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
