"""A recording served over HTTP on loopback: what every API's replay server shares.

With a replay server the live path of a model (its official SDK, real HTTP, real
streaming) runs offline. What a request looks like and how a reply is written depend
on the API: ``server.py`` speaks Ollama's, ``sse_server.py`` OpenAI's and Anthropic's.
What is the same for all of them is here:

- :class:`ReplayServer`: background threads (no event loop, so a notebook kernel can
  use it), every reply ending its connection, every thread joined and the port
  released on ``close()``; which recorded turn answers a request (``RequestCursor``,
  strict or loose), pacing at the recorded speed, and :class:`Faults` that break one
  reply on purpose;
- :class:`ReplayHandler`: the guards against hostile requests, which answer with a
  4xx JSON error and never a dropped connection: bodies are capped at
  :data:`MAX_BODY_BYTES` (413 beyond), a request must arrive within
  ``request_timeout`` seconds (408), nesting is capped at :data:`MAX_DEPTH`, a body
  sent chunked or with conflicting lengths is refused; an unexpected error in a
  handler is answered with 500 and kept in ``ReplayServer.errors``.

The server never pretends to be a model: each protocol's handler says, where its
clients ask who they talk to, that it is the labkit replay server and which recording
it serves, so a capture made through it keeps the recording's own provenance.
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
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..harness.loop import positive_int
from ..recording.format import check_recording, load_recording
from ..settings import DEFAULT_MODEL, recording_path
from ..settings import SERVER_REQUEST_TIMEOUT as REQUEST_TIMEOUT
from .replay import ReplayMismatch, RequestCursor

BATCH_BYTES = 64 * 1024  # unpaced replies go out in HTTP chunks of about this size
MAX_BODY_BYTES = 16 * 2**20  # a request body beyond this gets 413 (the course's are < 1 MB)
MAX_DEPTH = 64  # nesting a request body may have (the course's reach 8)
PREFIX = "labkit replay server: "


@dataclass(frozen=True)
class Faults:
    """Ways to break one reply on purpose. All are off by default.

    ``turn``: the request (1 = the first) they apply to. ``drop_done``: leave out
    the chunk that ends the reply (Ollama's ``done`` chunk, OpenAI's ``finish_reason``
    chunk, Anthropic's ``message_stop``). ``close_after``: close the connection after
    N chunks. ``error_after``: after N chunks send an error the way the API reports
    one mid-reply (with N = 0: an HTTP 500 instead). ``garbage_after``: after N chunks
    send something that is not JSON, then end the reply. ``stall_after``: after N
    chunks send nothing more, keeping the connection open. ``status``: answer with this
    HTTP status and the API's error body. ``delay``: wait this many seconds first.
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
        cuts = [
            n
            for n in (self.close_after, self.error_after, self.garbage_after, self.stall_after)
            if n is not None
        ]
        if len(cuts) > 1:
            raise ValueError(
                "choose one of close_after, error_after, garbage_after and stall_after"
            )
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in cuts):
            raise ValueError(
                "close_after, error_after, garbage_after and stall_after count chunks: ints >= 0"
            )
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError(f"status {self.status} is not an HTTP error status (400-599)")

    @classmethod
    def from_keywords(cls, keywords: dict) -> Faults:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(keywords) - known)
        if unknown:
            raise TypeError(f"unknown fault {', '.join(unknown)}; the faults are {sorted(known)}")
        return cls(**keywords)


NO_FAULTS = Faults()


def reply_plan(turn: dict, faults: Faults, final) -> tuple[list, str, str | None]:
    """What to send for one recorded turn: ``(positions, ending, error)``.

    ``final(chunk)`` says whether a chunk is the one that ends a reply (what
    ``drop_done`` leaves out). ``positions`` index the turn's chunks to stream, in
    order; ``ending`` is ``"end"`` (finish the response), ``"error"`` (send an error,
    then finish), ``"garbage"`` (send what is not JSON, then finish), ``"close"`` (drop
    the connection) or ``"stall"`` (go quiet).
    """
    positions = [
        index
        for index, entry in enumerate(turn["chunks"])
        if not (faults.drop_done and final(entry["chunk"]))
    ]
    for ending, count in (
        ("close", faults.close_after),
        ("error", faults.error_after),
        ("garbage", faults.garbage_after),
        ("stall", faults.stall_after),
    ):
        if count is not None:
            return positions[:count], ending, faults.error if ending == "error" else None
    if "error" in turn:  # the recorded stream itself failed here
        return positions, "error", turn["error"]
    return positions, "end", None


@dataclass(frozen=True)
class Served:
    """A recording to serve, with the name and digest by which the server names it."""

    recording: dict
    name: str
    sha256: str
    modified: datetime

    @classmethod
    def of(cls, recording) -> Served:
        """From a recording file's path (checked as ``load_recording`` checks it), or a
        recording in memory (checked the same way; its digest is its canonical JSON's)."""
        if isinstance(recording, (str, os.PathLike)):  # a path, or a course recording's name
            path = recording_path(recording)
            loaded = load_recording(path)
            return cls(
                loaded,
                path.name,
                hashlib.sha256(path.read_bytes()).hexdigest(),
                datetime.fromtimestamp(path.stat().st_mtime, UTC),
            )
        check_recording(recording)
        digest = hashlib.sha256(json.dumps(recording, sort_keys=True).encode()).hexdigest()
        return cls(recording, "recording", digest, datetime.now(UTC))

    @property
    def wire_format(self) -> str:
        return self.recording.get("wire_format", "ollama")


class ReplayServer:
    """A running replay server for one recording; ``url`` is its address.

    Chat requests get the recording's turns in order. A request with as many
    messages as the first recorded one begins a new conversation: the recording
    starts over, so one server can answer run after run. A refused request uses
    up no turn. ``chat_requests`` keeps each chat request's JSON body as it arrived:
    what the client really sent (never its headers, so never a key). ``errors``
    keeps any unexpected handler error.

    ``handler`` is the protocol's :class:`ReplayHandler`. It answers to the model names
    ``models`` (default: ``labkit-replay:<recording>``, the course's model tag, the
    protocol's default model and the model the recording names); any other name gets the
    API's 404.
    ``api_key``: the key a client must send (None: any key, or none).
    """

    def __init__(
        self,
        served: Served,
        handler,
        *,
        port=0,
        strict=True,
        speed=None,
        log=None,
        models=None,
        capabilities=(),
        request_timeout=REQUEST_TIMEOUT,
        faults: Faults = NO_FAULTS,
        api_key: str | None = None,
    ):
        self.recording = served.recording
        self.turns = self.recording["turns"]
        self.handler = handler
        self.cursor = RequestCursor(self.turns, strict=strict, restarts=True, wire=True)
        self.speed = speed
        self.faults = faults
        self.capabilities = tuple(capabilities)
        self.request_timeout = request_timeout
        self.api_key = api_key
        self.log = log or (lambda line: None)
        self.lines = [[handler.wire_line(entry) for entry in turn["chunks"]] for turn in self.turns]
        self.chat_requests = []
        self.errors = []
        self.identity = {
            "server": "labkit replay server",
            "recording": served.name,
            "recording_sha256": served.sha256,
            "turns": len(self.turns),
            "wire_format": served.wire_format,
            "provenance": self.recording["provenance"],
            "note": "no model runs here: every reply is read from the recording",
        }
        recorded = self.recording["provenance"].get("model")
        self.models = list(
            dict.fromkeys(
                models
                if models is not None
                else [
                    f"labkit-replay:{Path(served.name).stem}",
                    DEFAULT_MODEL,
                    handler.default_model,
                    *([recorded] if recorded else []),
                ]
            )
        )
        self.modified = served.modified
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._connections = set()
        self._httpd = _HTTPServer(("127.0.0.1", port), handler)
        self._httpd.replay = self
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            args=(0.05,),
            name=f"labkit replay server {self.url}",
            daemon=True,
        )
        self._thread.start()

    def serves(self, name) -> bool:
        key = self.handler.model_key
        return isinstance(name, str) and key(name) in {key(m) for m in self.models}

    @property
    def strict(self) -> bool:
        return self.cursor.strict

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
        return (
            f"<ReplayServer {self.identity['recording']} ({self.identity['wire_format']}) "
            f"at {self.url}>"
        )


class Refusal(Exception):
    """A request answered with an HTTP error: ``status`` and the text of its error."""

    def __init__(self, status: int, error: str):
        super().__init__(error)
        self.status, self.error = status, error


class ReplayHandler(BaseHTTPRequestHandler):
    """One HTTP request to a replay server, whatever its API.

    A protocol subclasses it and sets: ``wire_line(entry)`` (a recorded chunk as bytes on
    the wire), ``final(chunk)`` (whether a chunk ends a reply), ``error_body(status,
    text)`` (the API's JSON error), ``stream_type``, ``stream_error(text)`` and
    ``garbage`` (an error, and something that is not JSON, as a streamed reply sends
    them), ``stream_end`` (what closes a stream), ``whole_reply(turn, positions, body)``
    (a reply for a client that does not stream), ``model_key(name)`` and
    ``default_model``; and routes requests from ``_get(head)`` (GET and HEAD) and
    ``do_POST`` as its API does.
    Each reply ends its connection, so no idle keep-alive connection holds up shutdown.
    """

    protocol_version = "HTTP/1.1"
    server_version = "labkit-replay"
    stream_type = "application/octet-stream"
    stream_end = b""
    garbage = b"{not json\n"
    default_model = ""

    @staticmethod
    def model_key(name: str) -> str:
        return name

    @property
    def replay(self) -> ReplayServer:
        return self.server.replay

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
            self.send_json_error(refusal.status, PREFIX + refusal.error)
            self._discard_the_rest()
        except OSError:
            self.close_connection = True  # the client went away, or we are closing
        except Exception as exc:  # a bug of ours: answer it and keep it, never die silently
            self.replay.errors.append(repr(exc))
            self.replay.log(f"handler error: {exc!r}")
            self.send_json_error(500, f"{PREFIX}internal error: {exc!r}")

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
            code = 405  # a method the API has no route for
        self.request_version = (
            "HTTP/1.1"  # so even a request line we could not read gets a status line
        )
        text = message or self.responses.get(code, ("error",))[0]
        self.send_json_error(code, f"{PREFIX}{text}")

    def do_HEAD(self):
        self._get(head=True)

    def do_GET(self):
        self._get(head=False)

    def do_PUT(self):
        self.send_error(405)

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    def read_json(self):
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
            raise Refusal(
                413,
                f"the request body is {int(text):,} bytes; this server accepts "
                f"at most {MAX_BODY_BYTES:,}",
            )
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
        deadline = time.monotonic() + self.replay.request_timeout
        data = bytearray()
        while len(data) < size:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                self.connection.settimeout(left)
                piece = self.rfile.read1(min(size - len(data), 1 << 16))
            except TimeoutError:
                raise Refusal(
                    408,
                    f"the request body did not arrive within "
                    f"{self.replay.request_timeout:g} s "
                    f"({len(data):,} of {size:,} bytes came)",
                ) from None
            if not piece:
                raise Refusal(400, f"the request body ended after {len(data):,} of {size:,} bytes")
            data += piece
        self.connection.settimeout(None)  # the reply may take as long as the recording says
        return bytes(data)

    def answer_turn(self, messages: list, names: list, body: dict, *, streamed: bool) -> None:
        """Answer a chat request from the next recorded turn: refuse a mismatch (strict
        mode), apply the faults of this turn, then stream it or send it whole."""
        replay = self.replay
        try:
            number, turn = replay.cursor.next_turn(messages, names)
        except ReplayMismatch as exc:
            replay.log(f"refused a chat request: {exc}")
            return self.send_json_error(400, f"{PREFIX}{exc}")
        faults = replay.faults if number == replay.faults.turn else NO_FAULTS
        if faults.delay and replay.wait(faults.delay):
            return
        if faults.status:
            replay.log(f"turn {number}: answered HTTP {faults.status} (injected)")
            return self.send_json_error(faults.status, faults.error)
        positions, ending, error = reply_plan(turn, faults, self.final)
        replay.log(
            f"turn {number}: {'streaming' if streamed else 'answering'} "
            f"{len(positions)} chunks ({ending})"
        )
        if ending == "error" and (not positions or not streamed):
            return self.send_json_error(500, error)  # an error before any output is a status
        if streamed:
            return self._stream(turn["chunks"], replay.lines[number - 1], positions, ending, error)
        if ending == "stall":
            replay.wait(None)
        elif ending == "close":
            self.close_connection = True
            _hang_up(self.connection)
        elif ending == "garbage":
            self.send_body(200, self.garbage, "application/json; charset=utf-8")
        else:
            self.send_json(200, self.whole_reply(turn, positions, body))

    def _stream(self, entries, lines, positions, ending, error) -> None:
        """A streamed reply: the chosen chunks' wire lines (at the recorded pace when the
        server has a speed), then the ending the plan says."""
        replay = self.replay
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", self.stream_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            if replay.speed:  # one HTTP chunk per line, at the recorded offsets
                start = time.monotonic()
                for index in positions:
                    due = start + entries[index]["at"] / replay.speed
                    if replay.wait(max(0.0, due - time.monotonic())):
                        raise ConnectionAbortedError("the server is closing")
                    self._write_chunk(lines[index])
            else:
                batch = bytearray()
                for index in positions:
                    batch += lines[index]
                    if len(batch) >= BATCH_BYTES:
                        self._write_chunk(batch)
                        batch.clear()
                if batch:
                    self._write_chunk(batch)
            tail = {
                "error": lambda: self.stream_error(error),
                "garbage": lambda: self.garbage,
                "end": lambda: self.stream_end,
            }.get(ending, lambda: b"")()
            if tail:
                self._write_chunk(tail)
            if ending == "stall":
                replay.wait(None)
            if ending in ("end", "error", "garbage"):
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client stopped reading (the loop abandoned the stream), or we are closing

    def _write_chunk(self, data) -> None:
        self.wfile.write(b"%X\r\n" % len(data) + bytes(data) + b"\r\n")

    def send_json(self, status: int, payload: dict, head: bool = False) -> None:
        self.send_body(
            status, self.json_bytes(payload), "application/json; charset=utf-8", head=head
        )

    def send_json_error(self, status: int, error: str) -> None:
        self.send_json(status, self.error_body(status, error))

    def send_body(self, status: int, body: bytes, content_type: str, head: bool = False) -> None:
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

    # --- what each protocol says ------------------------------------------------------

    @staticmethod
    def json_bytes(payload) -> bytes:
        """A JSON answer as the API's server writes one (compact, by default)."""
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()

    def error_body(self, status: int, text: str) -> dict:
        return {"error": text}

    def stream_error(self, text: str) -> bytes:
        raise NotImplementedError

    def whole_reply(self, turn: dict, positions: list, body: dict) -> dict:
        raise NotImplementedError

    def _get(self, head: bool) -> None:
        raise NotImplementedError

    @staticmethod
    def final(chunk: dict) -> bool:
        raise NotImplementedError

    @staticmethod
    def wire_line(entry: dict) -> bytes:
        raise NotImplementedError


def json_kind(value) -> str:
    """A JSON value's kind, as an error about a request names it."""
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "number",
        float: "number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def fields_problem(value: dict, where: str, kinds: dict) -> str | None:
    """Say which field of ``value`` has a JSON kind ``kinds`` does not allow, or None.
    Absent and null fields pass."""
    for key, allowed in kinds.items():
        item = value.get(key)
        if item is None:
            continue
        if isinstance(item, bool) and bool not in allowed or not isinstance(item, allowed):
            wanted = " or ".join(json_kind(kind()) for kind in allowed)
            return f"{where}.{key} is a JSON {json_kind(item)}, not {wanted}"
    return None


def _depth_over(value, limit: int) -> bool:
    """True when ``value`` nests deeper than ``limit`` (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend(
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return False


def _hang_up(connection) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the other side


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class _HTTPServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """An error that escaped a handler: keep it (never print a traceback and go on)."""
        error = sys.exc_info()[1]
        self.replay.errors.append(repr(error))
        self.replay.log(f"handler error: {error!r}")
