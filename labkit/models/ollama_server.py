"""Ollama's HTTP API on loopback, answering from a recording: the replay server's Ollama handler.

With it the live path (``OllamaModel``, the official SDK, real HTTP and NDJSON
streaming) runs offline. Each ``POST /api/chat`` gets the next recorded turn:
streamed as chunked NDJSON, each line exactly as the recording kept it, or as one
JSON object when the client asks for ``"stream": false`` (the SDKs' default). It
answers the other calls Ollama's clients make as Ollama does (``HEAD``/``GET /``,
load and unload with no messages, ``/api/tags``, ``/api/show``, ``/api/ps``, HTTP
error statuses with ``{"error": ...}`` bodies, 404 for a model it does not serve).
In strict mode a request that differs from the recorded one gets an HTTP 400 whose
``error`` names the first difference, and it does not use up the turn.

``/``, ``/api/version``, ``/api/tags`` and ``/api/show`` say it is the labkit replay
server and which recording it serves. The server's life, its faults and its guards
against hostile requests are every API's (``replay_server.py``, ``replay_handler.py``).
A chat request whose body is not the shape Ollama's ``ChatRequest`` reads
(:data:`CHAT_REQUEST`) is refused with 400.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ..settings import DEFAULT_MODEL
from .go_json import go_time, ollama_line
from .replay_handler import PREFIX, Refusal, ReplayHandler
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
)

SERVER_VERSION = "labkit-replay-0.2.0"
NOT_JSON = b'{"model": "scripted", "message": {"role": "assistant", "content": "cut\n'
#: What Ollama's ``ChatRequest`` reads, and of what kinds.
CHAT_REQUEST = an_object(
    model=STRING,
    messages=array_of(
        an_object(
            role=STRING,
            content=STRING,
            thinking=STRING,
            images=ARRAY,
            tool_calls=array_of(
                an_object(
                    id=STRING,
                    function=an_object(index=INTEGER, name=STRING, arguments=OBJECT),
                )
            ),
            tool_name=STRING,
            tool_call_id=STRING,
        )
    ),
    tools=array_of(
        an_object("a tool object", type=STRING, function=an_object(name=STRING, description=STRING))
    ),
    stream=BOOLEAN,
    think=one_of(BOOLEAN, STRING),
    keep_alive=one_of(NUMBER, STRING),
    options=OBJECT,
)


def is_done(chunk: dict) -> bool:
    """Whether an Ollama chunk is the one that ends a reply."""
    return chunk.get("done") is True


def whole_reply(chunks: list, with_tools: bool) -> dict:
    """The one JSON object Ollama answers with ``"stream": false``: the last chunk,
    with the text, thinking and (when the request offered tools) tool calls of all."""
    reply = dict(chunks[-1]) if chunks else {"model": "", "done": False}
    content, thinking, calls = [], [], []
    for chunk in chunks:
        message = chunk.get("message") or {}
        content.append(message.get("content") or "")
        thinking.append(message.get("thinking") or "")
        calls += message.get("tool_calls") or []
    message = {"role": "assistant", "content": "".join(content)}
    if "".join(thinking):
        message["thinking"] = "".join(thinking)
    if calls and with_tools:
        message["tool_calls"] = calls
    reply["message"] = message
    return reply


def model_key(name: str) -> str:
    """The name Ollama files a model under: ``gemma4`` and ``library/gemma4:latest`` are one."""
    name = name.strip().lower().removeprefix("registry.ollama.ai/").removeprefix("library/")
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _zero_duration(value) -> bool:
    """Whether a ``keep_alive`` means "unload now", as Ollama reads durations."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value == 0
    return (
        isinstance(value, str)
        and re.fullmatch(r"[+-]?(0|((0*\.?0*)(ns|us|µs|μs|ms|s|m|h))+)", value) is not None
    )


def _loaded(model: str, reason: str) -> dict:
    """Ollama's answer to a chat with no messages: the model was loaded, or unloaded."""
    return {
        "model": model,
        "created_at": go_time(datetime.now(UTC)),
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": reason,
    }


class OllamaHandler(ReplayHandler):
    """Ollama's routes; chat replies stream as chunked NDJSON."""

    stream_type = "application/x-ndjson"
    chat_request = CHAT_REQUEST
    garbage = NOT_JSON
    default_model = DEFAULT_MODEL
    model_key = staticmethod(model_key)
    final = staticmethod(is_done)

    @staticmethod
    def chunk_bytes(entry: dict) -> bytes:
        return (entry.get("line") or ollama_line(entry["chunk"])).encode() + b"\n"

    @staticmethod
    def json_bytes(payload) -> bytes:
        return ollama_line(payload).encode()  # as Go's c.JSON writes it

    def stream_error(self, text: str) -> bytes:
        return ollama_line({"error": text}).encode() + b"\n"

    def whole_reply(self, turn, positions, body) -> dict:
        chunks = [turn["chunks"][index]["chunk"] for index in positions]
        return whole_reply(chunks, bool(body.get("tools")))

    def _get(self, head: bool):
        replay = self.replay
        routes = {
            "/": lambda: self.send_body(
                200,
                b"labkit replay server is running (not Ollama)",
                "text/plain; charset=utf-8",
                head=head,
            ),
            "/api/version": lambda: self.send_json(
                200, {"version": SERVER_VERSION, "labkit_replay": replay.identity}, head
            ),
            "/api/tags": lambda: self.send_json(
                200, {"models": [self.model_entry(m) for m in replay.models]}, head
            ),
        }
        if not head:
            routes["/api/ps"] = lambda: self.send_json(
                200, {"models": []}
            )  # nothing is ever loaded
        if self.route in routes:
            routes[self.route]()
        else:
            self.send_json_error(404, f"{PREFIX}no {self.command} {self.route}")

    def model_entry(self, name: str) -> dict:
        """How ``/api/tags`` describes one served name: a recording, not a model."""
        return {
            "name": name,
            "model": name,
            "modified_at": go_time(self.replay.modified),
            "size": 0,
            "digest": self.replay.identity["recording_sha256"],
            "details": {
                "parent_model": "",
                "format": "labkit-recording",
                "family": "labkit-replay",
                "families": ["labkit-replay"],
                "parameter_size": "0",
                "quantization_level": "none",
            },
        }

    def do_POST(self):
        if self.route not in ("/api/chat", "/api/show"):
            return self.send_json_error(404, f"{PREFIX}no POST {self.route}")
        if self.route == "/api/chat":
            self._chat(self.read_chat())
        else:
            self._show(self.read_json())

    def _show(self, body):
        replay = self.replay
        name = (body.get("model") or body.get("name")) if isinstance(body, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise Refusal(400, "model is required")
        if not replay.serves(name):
            shortest = model_key(name).removeprefix("registry.ollama.ai/")
            return self.send_json_error(404, f"model '{shortest}' not found")
        entry = self.model_entry(name)
        self.send_json(
            200,
            {
                "modelfile": "# labkit replay server: replies come from a recording, no model runs",
                "parameters": "",
                "template": "",
                "details": entry["details"],
                "model_info": {"general.architecture": "labkit-replay"},
                "capabilities": list(replay.capabilities),
                "modified_at": entry["modified_at"],
            },
        )

    def _chat(self, body):
        replay = self.replay
        model = body.get("model")
        if not model:
            return self.send_json_error(400, "model is required")
        if not replay.serves(model):
            return self.send_json_error(404, f"model '{model}' not found")
        messages = body.get("messages") or []
        if not messages and _zero_duration(body.get("keep_alive")):
            return self.send_json(200, _loaded(model, "unload"))
        if body.get("think") not in (None, False) and "thinking" not in replay.capabilities:
            return self.send_json_error(400, f'"{model}" does not support thinking')
        if body.get("tools") and "tools" not in replay.capabilities:
            return self.send_json_error(400, f"{model} does not support tools")
        if not messages:
            return self.send_json(200, _loaded(model, "load"))
        names = [(tool.get("function") or {}).get("name") for tool in body.get("tools") or []]
        self.answer_turn(messages, names, body, streamed=body.get("stream") is not False)
