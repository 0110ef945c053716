"""A replay server: Ollama's HTTP API on loopback, answering from a recording.

With it the live path (``OllamaModel``, the official SDK, real HTTP and NDJSON
streaming) runs offline. Each ``POST /api/chat`` gets the next recorded turn:
streamed as chunked NDJSON, each line exactly as the recording kept it, or as one
JSON object when the client asks for ``"stream": false`` (the SDKs' default). It
answers the other calls Ollama's clients make as Ollama does (``HEAD``/``GET /``,
load and unload with no messages, ``/api/tags``, ``/api/show``, ``/api/ps``, HTTP
error statuses with ``{"error": ...}`` bodies, 404 for a model it does not serve).
In strict mode a request that differs from the recorded one gets an HTTP 400 whose
``error`` names the first difference, and it does not use up the turn.
Faults can be injected into one reply for lessons and tests.

The server never pretends to be a model: ``/``, ``/api/version``, ``/api/tags``
and ``/api/show`` say it is the labkit replay server and which recording it
serves, so a capture made through it keeps the recording's own provenance.

Hostile requests get a 4xx JSON answer, never a dropped connection: bodies are
capped at :data:`MAX_BODY_BYTES` (413 beyond), a request must arrive within
``request_timeout`` seconds (408), nesting is capped at :data:`MAX_DEPTH`, and a
body that is not the shape Ollama reads is refused with 400. An unexpected error
in a handler is answered with 500 and kept in ``ReplayServer.errors``.

It runs in background threads (no event loop), so a notebook kernel can use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..harness.loop import positive_int
from ..recording.format import check_recording, load_recording
from ..settings import DEFAULT_MODEL, SERVER_REQUEST_TIMEOUT as REQUEST_TIMEOUT
from .replay import ReplayMismatch, RequestCursor
from .wire import go_time, ollama_line

SERVER_VERSION = "labkit-replay-0.2.0"
NOT_JSON = b'{"model": "scripted", "message": {"role": "assistant", "content": "cut\n'
BATCH_BYTES = 64 * 1024      # unpaced replies go out in HTTP chunks of about this size
MAX_BODY_BYTES = 16 * 2**20  # a request body beyond this gets 413 (the course's are < 1 MB)
MAX_DEPTH = 64               # nesting a request body may have (the course's reach 8)
CAPABILITIES = ("completion", "tools", "thinking")
PREFIX = "labkit replay server: "


@dataclass(frozen=True)
class Faults:
    """Ways to break one reply on purpose. All are off by default.

    ``turn``: the request (1 = the first) they apply to. ``drop_done``: leave out
    the final ``done`` chunk. ``close_after``: close the connection after N chunks.
    ``error_after``: after N chunks send an ``{"error": error}`` line, as Ollama
    does when it fails mid-reply (with N = 0: an HTTP 500, as Ollama answers an
    error before the first chunk). ``garbage_after``: after N chunks send a line
    that is not JSON, then end the reply. ``stall_after``: after N chunks send nothing
    more, keeping the connection open. ``status``: answer with this HTTP status
    and ``{"error": error}``. ``delay``: wait this many seconds before answering.
    """

    turn: int = 1
    drop_done: bool = False
    close_after: int | None = None
    error_after: int | None = None
    garbage_after: int | None = None
    stall_after: int | None = None
    status: int | None = None
    delay: float = 0.0
    error: str = "injected fault: the model runner stopped"

    def __post_init__(self):
        positive_int(self.turn, "turn (requests count from 1)")
        if not self.delay >= 0:
            raise ValueError(f"delay is in seconds, >= 0, got {self.delay!r}")
        cuts = [n for n in (self.close_after, self.error_after, self.garbage_after,
                            self.stall_after) if n is not None]
        if len(cuts) > 1:
            raise ValueError("choose one of close_after, error_after, garbage_after and stall_after")
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in cuts):
            raise ValueError("close_after, error_after, garbage_after and stall_after count "
                             "chunks: ints >= 0")
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError(f"status {self.status} is not an HTTP error status (400-599)")

    @classmethod
    def from_keywords(cls, keywords: dict) -> "Faults":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(keywords) - known)
        if unknown:
            raise TypeError(f"unknown fault {', '.join(unknown)}; the faults are {sorted(known)}")
        return cls(**keywords)


NO_FAULTS = Faults()


def reply_plan(turn: dict, faults: Faults = NO_FAULTS) -> tuple[list, str, str | None]:
    """What to send for one recorded turn: ``(positions, ending, error)``.

    ``positions`` index the turn's chunks to stream, in order; ``ending`` is
    ``"end"`` (finish the response), ``"error"`` (send an error line, then finish),
    ``"garbage"`` (send a line that is not JSON, then finish),
    ``"close"`` (drop the connection) or ``"stall"`` (go quiet).
    """
    positions = [index for index, entry in enumerate(turn["chunks"])
                 if not (faults.drop_done and entry["chunk"].get("done") is True)]
    for ending, count in (("close", faults.close_after), ("error", faults.error_after),
                          ("garbage", faults.garbage_after), ("stall", faults.stall_after)):
        if count is not None:
            return positions[:count], ending, faults.error if ending == "error" else None
    if "error" in turn:  # the recorded stream itself failed here
        return positions, "error", turn["error"]
    return positions, "end", None


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


def serve_recording(recording, *, port: int = 0, strict: bool = True, speed: float | None = None,
                    log=None, models=None, capabilities=CAPABILITIES,
                    request_timeout: float = REQUEST_TIMEOUT, **faults) -> "ReplayServer":
    """Start serving ``recording`` (a dict, or the path of a recording file) on 127.0.0.1.

    Returns a running :class:`ReplayServer`; use it in a ``with`` block, or call
    ``close()``. ``port=0`` picks a free port (see ``.url``). ``speed``: None
    streams as fast as the client reads, 1.0 at the recorded pace. ``log(line)``
    hears about each chat request. ``models``: the model names it answers to (see
    :class:`ReplayServer`); ``capabilities``: what ``/api/show`` says they can do,
    and what chat requests may ask for. ``faults``: see :class:`Faults`.
    """
    return ReplayServer(recording, port=port, strict=strict, speed=speed, log=log,
                        models=models, capabilities=capabilities,
                        request_timeout=request_timeout, faults=Faults.from_keywords(faults))


class ReplayServer:
    """A running replay server. ``url`` is its address, for ``OllamaModel(host=...)``.

    Chat requests get the recording's turns in order. A request with as many
    messages as the first recorded one begins a new conversation: the recording
    starts over, so one server can answer run after run. A refused request uses
    up no turn. ``chat_requests`` keeps each chat request's JSON body as it arrived:
    what the client really sent. ``errors`` keeps any unexpected handler error.

    It answers to the model names ``models`` (default: ``labkit-replay:<recording>``,
    the course's model tag, and the model an Ollama recording names); any other
    name gets Ollama's 404 ``model '<name>' not found``.
    """

    def __init__(self, recording, *, port=0, strict=True, speed=None, log=None, models=None,
                 capabilities=CAPABILITIES, request_timeout=REQUEST_TIMEOUT,
                 faults: Faults = NO_FAULTS):
        if isinstance(recording, (str, os.PathLike)):
            path, recording = Path(recording), load_recording(recording)
            name, digest = path.name, hashlib.sha256(path.read_bytes())
            modified = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
        else:  # a recording in memory: check it as a file is checked, hash its canonical JSON
            check_recording(recording)
            name = "recording"
            digest = hashlib.sha256(json.dumps(recording, sort_keys=True).encode())
            modified = datetime.now(timezone.utc)
        self.recording = recording
        self.turns = recording["turns"]
        self.cursor = RequestCursor(self.turns, strict=strict, restarts=True, wire=True)
        self.speed = speed
        self.faults = faults
        self.capabilities = tuple(capabilities)
        self.request_timeout = request_timeout
        self.log = log or (lambda line: None)
        self.lines = [[(entry.get("line") or ollama_line(entry["chunk"])).encode() + b"\n"
                       for entry in turn["chunks"]] for turn in self.turns]
        self.chat_requests = []
        self.errors = []
        self.identity = {
            "server": "labkit replay server", "recording": name,
            "recording_sha256": digest.hexdigest(),
            "turns": len(self.turns), "provenance": recording["provenance"],
            "note": "no model runs here: every reply is read from the recording"}
        served = recording["provenance"].get("model")
        self.models = list(dict.fromkeys(models if models is not None else [
            f"labkit-replay:{Path(name).stem}", DEFAULT_MODEL, *([served] if served else [])]))
        self.modified_at = go_time(modified)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._connections = set()
        self._httpd = _HTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.replay = self
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name=f"labkit replay server {self.url}", daemon=True)
        self._thread.start()

    def serves(self, name) -> bool:
        return isinstance(name, str) and model_key(name) in {model_key(m) for m in self.models}

    @property
    def strict(self) -> bool:
        return self.cursor.strict

    def model_entry(self, name: str) -> dict:
        """How ``/api/tags`` describes one served name: a recording, not a model."""
        return {"name": name, "model": name, "modified_at": self.modified_at, "size": 0,
                "digest": self.identity["recording_sha256"], "details": {
                    "parent_model": "", "format": "labkit-recording", "family": "labkit-replay",
                    "families": ["labkit-replay"], "parameter_size": "0",
                    "quantization_level": "none"}}

    @property
    def open_connections(self) -> int:
        """How many client connections are open now (a closed stream leaves none)."""
        with self._lock:
            return len(self._connections)

    def wait(self, seconds: float | None) -> bool:
        """Sleep up to ``seconds`` (None: until closing); True if the server is closing."""
        return self._closing.wait(seconds)

    def track(self, connection, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
                if self._closing.is_set():
                    _hang_up(connection)
            else:
                self._connections.discard(connection)

    def close(self) -> None:
        """Stop serving: end open replies, join every thread, release the port."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._httpd.shutdown()
        with self._lock:
            for connection in self._connections:
                _hang_up(connection)
        self._httpd.server_close()  # joins the request threads
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return f"<ReplayServer {self.identity['recording']} at {self.url}>"


class Refusal(Exception):
    """A request answered with an HTTP error: ``status`` and the text of its ``error``."""

    def __init__(self, status: int, error: str):
        super().__init__(error)
        self.status, self.error = status, error


def chat_problem(body) -> str | None:
    """Say how a chat request body is not what Ollama's ``ChatRequest`` reads, or None."""
    if not isinstance(body, dict):
        return f"the request body is a JSON {_kind(body)}, not an object"
    problem = _fields_problem(body, "the request", {
        "model": (str,), "messages": (list,), "tools": (list,), "stream": (bool,),
        "think": (bool, str), "keep_alive": (int, float, str), "options": (dict,)})
    if problem:
        return problem
    for index, message in enumerate(body.get("messages") or []):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            return f"{where} is a JSON {_kind(message)}, not an object"
        problem = _fields_problem(message, where, {
            "role": (str,), "content": (str,), "thinking": (str,), "images": (list,),
            "tool_calls": (list,), "tool_name": (str,), "tool_call_id": (str,)})
        if problem:
            return problem
        for number, call in enumerate(message.get("tool_calls") or []):
            at = f"{where}.tool_calls[{number}]"
            if not isinstance(call, dict):
                return f"{at} is a JSON {_kind(call)}, not an object"
            problem = (_fields_problem(call, at, {"id": (str,), "function": (dict,)})
                       or _fields_problem(call.get("function") or {}, f"{at}.function", {
                           "index": (int,), "name": (str,), "arguments": (dict,)}))
            if problem:
                return problem
    for index, tool in enumerate(body.get("tools") or []):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            return f"{where} is a JSON {_kind(tool)}, not a tool object"
        problem = (_fields_problem(tool, where, {"type": (str,), "function": (dict,)})
                   or _fields_problem(tool.get("function") or {}, f"{where}.function",
                                      {"name": (str,), "description": (str,)}))
        if problem:
            return problem
    return None


def _fields_problem(value: dict, where: str, kinds: dict) -> str | None:
    for key, allowed in kinds.items():
        item = value.get(key)
        if item is None:
            continue
        if isinstance(item, bool) and bool not in allowed or not isinstance(item, allowed):
            wanted = " or ".join(_kind(kind()) for kind in allowed)
            return f"{where}.{key} is a JSON {_kind(item)}, not {wanted}"
    return None


def _kind(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number",
            float: "number", type(None): "null"}.get(type(value), type(value).__name__)


def _depth_over(value, limit: int) -> bool:
    """True when ``value`` nests deeper than ``limit`` (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in
                         (item.values() if isinstance(item, dict) else item))
    return False


def _zero_duration(value) -> bool:
    """Whether a ``keep_alive`` means "unload now", as Ollama reads durations."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value == 0
    return isinstance(value, str) and re.fullmatch(
        r"[+-]?(0|((0*\.?0*)(ns|us|µs|μs|ms|s|m|h))+)", value) is not None


def _hang_up(connection) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the other side


class _HTTPServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """An error that escaped a handler: keep it (never print a traceback and go on)."""
        error = sys.exc_info()[1]
        self.replay.errors.append(repr(error))
        self.replay.log(f"handler error: {error!r}")


class _Handler(BaseHTTPRequestHandler):
    """One HTTP request. Each reply ends its connection, so no idle keep-alive connection
    can hold up shutdown; chat replies stream as chunked NDJSON."""

    protocol_version = "HTTP/1.1"
    server_version = "labkit-replay"

    @property
    def timeout(self):  # applied to the socket while the request line and headers arrive
        return self.server.replay.request_timeout

    def setup(self):
        self.answered = False
        super().setup()
        self.server.replay.track(self.connection, True)

    def finish(self):
        self.server.replay.track(self.connection, False)
        try:
            super().finish()
        except OSError:
            pass  # the client is gone

    def log_message(self, format, *args):
        pass  # chat requests are reported through the server's log; nothing goes to stderr

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except Refusal as refusal:
            self._send_error(refusal.status, PREFIX + refusal.error)
            self._discard_the_rest()
        except OSError:
            self.close_connection = True  # the client went away, or we are closing
        except Exception as exc:  # a bug of ours: answer it and keep it, never die silently
            self.server.replay.errors.append(repr(exc))
            self.server.replay.log(f"handler error: {exc!r}")
            self._send_error(500, f"{PREFIX}internal error: {exc!r}")

    def _discard_the_rest(self) -> None:
        """After refusing a request, read (for up to a second) what the client is still
        sending, so that closing does not reset the connection before it reads the answer."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + 1.0
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(1 << 16):
                    break
        except OSError:
            pass

    def send_response(self, code, message=None):
        self.answered = True
        super().send_response(code, message)

    def send_error(self, code, message=None, explain=None):
        """Errors http.server finds itself (bad request line, huge headers...), as JSON."""
        if code == 501:
            code = 405  # a method Ollama has no route for
        self.request_version = "HTTP/1.1"  # so even a request line we could not read gets a status line
        text = message or self.responses.get(code, ("error",))[0]
        self._send_error(code, f"{PREFIX}{text}")

    def do_HEAD(self):
        self._get(head=True)

    def do_GET(self):
        self._get(head=False)

    def _get(self, head: bool):
        replay = self.server.replay
        routes = {
            "/": lambda: (200, b"labkit replay server is running (not Ollama)",
                          "text/plain; charset=utf-8"),
            "/api/version": lambda: _json(200, {"version": SERVER_VERSION,
                                                "labkit_replay": replay.identity}),
            "/api/tags": lambda: _json(200, {"models": [replay.model_entry(m)
                                                        for m in replay.models]}),
        }
        if not head:
            routes["/api/ps"] = lambda: _json(200, {"models": []})  # nothing is ever loaded
        path = self.path.split("?", 1)[0]
        if path in routes:
            self._send(*routes[path](), head=head)
        else:
            self._send_error(404, f"{PREFIX}no {self.command} {path}")

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        if path not in ("/api/chat", "/api/show"):
            return self._send_error(404, f"{PREFIX}no POST {path}")
        body = self._read_json()
        if path == "/api/chat":
            self._chat(body)
        else:
            self._show(body)

    def do_PUT(self):
        self.send_error(405)

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT

    def _read_json(self):
        """The request body as JSON, or a :class:`Refusal` that says what is wrong with it."""
        if self.headers.get("Transfer-Encoding"):
            raise Refusal(411, "send the request body with a Content-Length, not chunked")
        lengths = set(self.headers.get_all("Content-Length") or [])
        if len(lengths) > 1:
            raise Refusal(400, "the request has conflicting Content-Length headers")
        text = lengths.pop().strip() if lengths else "0"
        if not re.fullmatch(r"[0-9]{1,20}", text):
            raise Refusal(400, f"Content-Length {text[:40]!r} is not a number of bytes")
        if int(text) > MAX_BODY_BYTES:
            raise Refusal(413, f"the request body is {int(text):,} bytes; this server accepts "
                               f"at most {MAX_BODY_BYTES:,}")
        data = self._read_exactly(int(text))
        if not data.strip():
            raise Refusal(400, "missing request body")
        try:
            body = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
        except RecursionError:
            raise Refusal(400, f"the request body nests deeper than {MAX_DEPTH} levels") from None
        except ValueError as exc:  # not UTF-8, not JSON, NaN or Infinity
            raise Refusal(400, f"the request body is not JSON ({exc})") from None
        if _depth_over(body, MAX_DEPTH):
            raise Refusal(400, f"the request body nests deeper than {MAX_DEPTH} levels")
        return body

    def _read_exactly(self, size: int) -> bytes:
        deadline = time.monotonic() + self.server.replay.request_timeout
        data = bytearray()
        while len(data) < size:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                self.connection.settimeout(left)
                piece = self.rfile.read1(min(size - len(data), 1 << 16))
            except TimeoutError:
                raise Refusal(408, f"the request body did not arrive within "
                                   f"{self.server.replay.request_timeout:g} s "
                                   f"({len(data):,} of {size:,} bytes came)") from None
            if not piece:
                raise Refusal(400, f"the request body ended after {len(data):,} of "
                                   f"{size:,} bytes")
            data += piece
        self.connection.settimeout(None)  # the reply may take as long as the recording says
        return bytes(data)

    def _show(self, body):
        replay = self.server.replay
        name = (body.get("model") or body.get("name")) if isinstance(body, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise Refusal(400, "model is required")
        if not replay.serves(name):
            shortest = model_key(name).removeprefix("registry.ollama.ai/")
            return self._send_error(404, f"model '{shortest}' not found")
        entry = replay.model_entry(name)
        self._send(*_json(200, {
            "modelfile": "# labkit replay server: replies come from a recording, no model runs",
            "parameters": "", "template": "", "details": entry["details"],
            "model_info": {"general.architecture": "labkit-replay"},
            "capabilities": list(replay.capabilities), "modified_at": replay.modified_at}))

    def _chat(self, body):
        replay = self.server.replay
        replay.chat_requests.append(body)  # list.append is atomic: no lock needed
        problem = chat_problem(body)
        if problem:
            raise Refusal(400, problem)
        model = body.get("model")
        if not model:
            return self._send_error(400, "model is required")
        if not replay.serves(model):
            return self._send_error(404, f"model '{model}' not found")
        messages = body.get("messages") or []
        if not messages and _zero_duration(body.get("keep_alive")):
            return self._send(*_json(200, _loaded(model, "unload")))
        if body.get("think") not in (None, False) and "thinking" not in replay.capabilities:
            return self._send_error(400, f'"{model}" does not support thinking')
        if body.get("tools") and "tools" not in replay.capabilities:
            return self._send_error(400, f"{model} does not support tools")
        if not messages:
            return self._send(*_json(200, _loaded(model, "load")))
        names = [(tool.get("function") or {}).get("name") for tool in body.get("tools") or []]
        try:
            number, turn = replay.cursor.next_turn(messages, names)
        except ReplayMismatch as exc:
            replay.log(f"refused a chat request: {exc}")
            return self._send_error(400, f"{PREFIX}{exc}")
        faults = replay.faults if number == replay.faults.turn else NO_FAULTS
        if faults.delay and replay.wait(faults.delay):
            return
        if faults.status:
            replay.log(f"turn {number}: answered HTTP {faults.status} (injected)")
            return self._send_error(faults.status, faults.error)
        positions, ending, error = reply_plan(turn, faults)
        streamed = body.get("stream") is not False  # Ollama streams unless told not to
        replay.log(f"turn {number}: {'streaming' if streamed else 'answering'} "
                   f"{len(positions)} chunks ({ending})")
        if ending == "error" and (not positions or not streamed):
            return self._send_error(500, error)  # Ollama: an error before any output is a status
        if not streamed:
            return self._answer_whole(turn, positions, ending, body)
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self._stream(turn["chunks"], replay.lines[number - 1], positions, replay)
            if ending == "error":
                self._write_chunk(ollama_line({"error": error}).encode() + b"\n")
            if ending == "garbage":
                self._write_chunk(NOT_JSON)
            if ending == "stall":
                replay.wait(None)
            if ending in ("end", "error", "garbage"):
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client stopped reading (the loop abandoned the stream), or we are closing

    def _answer_whole(self, turn, positions, ending, body):
        replay = self.server.replay
        if ending == "stall":
            replay.wait(None)
            return
        if ending == "close":
            self.close_connection = True
            return _hang_up(self.connection)
        if ending == "garbage":
            return self._send(200, NOT_JSON, "application/json; charset=utf-8")
        chunks = [turn["chunks"][index]["chunk"] for index in positions]
        self._send(*_json(200, whole_reply(chunks, bool(body.get("tools")))))

    def _stream(self, entries, lines, positions, replay):
        if replay.speed:  # one HTTP chunk per NDJSON line, at the recorded offsets
            start = time.monotonic()
            for index in positions:
                due = start + entries[index]["at"] / replay.speed
                if replay.wait(max(0.0, due - time.monotonic())):
                    raise ConnectionAbortedError("the server is closing")
                self._write_chunk(lines[index])
            return
        batch = bytearray()
        for index in positions:
            batch += lines[index]
            if len(batch) >= BATCH_BYTES:
                self._write_chunk(batch)
                batch.clear()
        if batch:
            self._write_chunk(batch)

    def _write_chunk(self, data) -> None:
        self.wfile.write(b"%X\r\n" % len(data) + bytes(data) + b"\r\n")

    def _send_error(self, status: int, error: str) -> None:
        self._send(*_json(status, {"error": error}))

    def _send(self, status: int, body: bytes, content_type: str, head: bool = False) -> None:
        self.close_connection = True
        if self.answered:
            return  # a reply has begun: all that is left is to end the connection
        head = head or self.command == "HEAD"
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if not head:
                self.wfile.write(body)
        except OSError:
            pass


def _json(status: int, payload: dict) -> tuple[int, bytes, str]:
    """An answer as Ollama's ``c.JSON`` writes it: one JSON object, no newline."""
    return status, ollama_line(payload).encode(), "application/json; charset=utf-8"


def _loaded(model: str, reason: str) -> dict:
    """Ollama's answer to a chat with no messages: the model was loaded, or unloaded."""
    return {"model": model, "created_at": go_time(datetime.now(timezone.utc)),
            "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": reason}


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")
