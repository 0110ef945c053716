"""One HTTP request to a replay server, whatever its API: the guards every API's server shares,
and a recorded turn sent back as the API sends a reply.

The guards against hostile requests answer with a 4xx JSON error and never a dropped
connection: bodies are capped at :data:`MAX_BODY_BYTES` (413 beyond), a request must
arrive within the server's ``request_timeout`` seconds (408), nesting is capped at
:data:`MAX_DEPTH`, a body sent chunked or with conflicting lengths is refused; an
unexpected error in a handler is answered with 500 and kept in ``ReplayServer.errors``.
What is the API's own (its routes, the shape of its requests, how a chunk is written, its
error bodies) a subclass says: ``ollama_server.py``, ``openai_server.py``,
``anthropic_server.py``.
"""

from __future__ import annotations

import json
import re
import socket
import time
from http.server import BaseHTTPRequestHandler

from .replay import ReplayMismatch
from .replay_faults import NO_FAULTS, reply_plan
from .request_shape import Shape, shape_problem

BATCH_BYTES = 64 * 1024  # unpaced replies go out in HTTP chunks of about this size
MAX_BODY_BYTES = 16 * 2**20  # a request body beyond this gets 413 (the course's are < 1 MB)
MAX_DEPTH = 64  # nesting a request body may have (the course's reach 8)
PREFIX = "labkit replay server: "


class Refusal(Exception):
    """A request answered with an HTTP error: ``status`` and the text of its error."""

    def __init__(self, status: int, error: str):
        super().__init__(error)
        self.status, self.error = status, error


class ReplayHandler(BaseHTTPRequestHandler):
    """One HTTP request to a replay server, whatever its API.

    An API's handler subclasses it and sets: ``chat_request`` (the shape of the chat
    request it reads, as a table: ``request_shape.py``), ``chunk_bytes(entry)`` (a
    recorded chunk as the bytes the API sends for it), ``final(chunk)`` (whether a chunk
    ends a reply), ``error_body(status, text)`` (the API's JSON error), ``stream_type``,
    ``stream_error(text)`` and ``garbage`` (an error, and something that is not JSON, as a
    streamed reply sends them), ``stream_end`` (what closes a stream), ``whole_reply(turn,
    positions, body)`` (a reply for a client that does not stream), ``model_key(name)``
    and ``default_model``; and routes requests from ``_get(head)`` (GET and HEAD) and
    ``do_POST`` as its API does, reading a chat request with ``read_chat``.
    Each reply ends its connection, so no idle keep-alive connection holds up shutdown.
    """

    protocol_version = "HTTP/1.1"
    server_version = "labkit-replay"
    stream_type = "application/octet-stream"
    stream_end = b""
    garbage = b"{not json\n"
    default_model = ""
    chat_request = Shape((dict,))

    @staticmethod
    def model_key(name: str) -> str:
        return name

    @property
    def replay(self):
        """The ``ReplayServer`` this request came to."""
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

    def read_chat(self) -> dict:
        """A chat request's body: kept in ``chat_requests`` as it arrived (the body only: a key
        travels in a header), then held against ``chat_request``; a :class:`Refusal` says
        where it does not fit."""
        body = self.read_json()
        self.replay.chat_requests.append(body)  # list.append is atomic: no lock needed
        problem = shape_problem(body, self.chat_request)
        if problem:
            raise Refusal(400, problem)
        return body

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
            hang_up(self.connection)
        elif ending == "garbage":
            self.send_body(200, self.garbage, "application/json; charset=utf-8")
        else:
            self.send_json(200, self.whole_reply(turn, positions, body))

    def _stream(self, entries, lines, positions, ending, error) -> None:
        """A streamed reply: the chosen chunks' bytes as recorded (at the recorded pace when the
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
    def chunk_bytes(entry: dict) -> bytes:
        raise NotImplementedError


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


def hang_up(connection) -> None:
    """End a connection both ways (what is already closed stays closed)."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the other side


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")
