"""One HTTP request to a replay server, whatever its API: the guards every API's server shares,
and a recorded turn sent back as the API sends a reply.

The guards against hostile requests answer with a 4xx JSON error and never a dropped
connection: a request's head and body must arrive within the server's ``request_timeout``
seconds, counted from the connection's start, however slowly they trickle (408); the body
is read and checked by ``request_body.py`` (size, nesting, JSON, Unicode) and then by the
API's request-shape table; an unexpected error in a handler is answered with 500 and kept
in ``ReplayServer.errors``.

A recorded turn is used up only once its reply has begun (its status line is 200): a reply
refused or broken before that leaves the turn for the client's retry (``replay_faults.py``).
Every response carries the API's request id header when the API has one.

What is the API's own (its routes, the shape of its requests, how a chunk is written, its
error bodies, which spellings of a request it treats as the same) a subclass says:
``ollama_server.py``, ``openai_server.py``, ``anthropic_server.py``.
"""

from __future__ import annotations

import io
import json
import secrets
import socket
import time
from http.server import BaseHTTPRequestHandler

from .replay import ReplayMismatch
from .replay_faults import reply_plan
from .request_body import (
    MAX_BODY_BYTES,
    MAX_DEPTH,
    DeadlineReader,
    LateRequest,
    Refusal,
    json_body,
)
from .request_shape import Shape, shape_problem

__all__ = ["MAX_BODY_BYTES", "MAX_DEPTH", "PREFIX", "Refusal", "ReplayHandler", "hang_up"]

BATCH_BYTES = 64 * 1024  # unpaced replies go out in HTTP chunks of about this size
PREFIX = "labkit replay server: "


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

    What it may set besides: ``canonical_messages(messages)`` (the spellings its API reads
    alike, written one way, for strict comparison), ``streamed_chunks(turn)`` (the chunks to
    stream for a recorded turn: a turn captured whole is cut into the API's chunks),
    ``stream_line`` and ``stream_extra`` (what a request's options change in a stream, such
    as a usage chunk), ``ping`` (the API's keep-alive event, for the server's ``pings``
    option) and ``request_id_header``.
    Each reply ends its connection, so no idle keep-alive connection holds up shutdown.
    """

    protocol_version = "HTTP/1.1"
    server_version = "labkit-replay"
    stream_type = "application/octet-stream"
    stream_end = b""
    garbage = b"{not json\n"
    ping = b""  # the API's keep-alive event (none: the server's pings option is refused)
    request_id_header = ""  # the header a response's request id goes in (none: not sent)
    default_model = ""
    chat_request = Shape((dict,))
    canonical_messages = None  # (messages) -> messages written one way, if the API has several

    @staticmethod
    def model_key(name: str) -> str:
        return name

    @classmethod
    def streamed_chunks(cls, turn: dict) -> list:
        """The chunk entries a streamed reply to ``turn`` sends: the recorded ones."""
        return turn["chunks"]

    @property
    def replay(self):
        """The ``ReplayServer`` this request came to."""
        return self.server.replay

    def setup(self):
        self.answered = False
        self.command, self.requestline = None, ""  # a 408 may come before a request line
        self.request_id = "req_replay_" + secrets.token_hex(10)
        super().setup()
        self.rfile.close()  # read through the deadline instead (closing frees the socket's copy)
        self.reader = DeadlineReader(
            self.connection, time.monotonic() + self.server.replay.request_timeout
        )
        self.rfile = io.BufferedReader(self.reader)
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
        except LateRequest:
            self.request_version = "HTTP/1.1"  # the request line may not have come whole
            self.send_json_error(
                408,
                f"{PREFIX}the request's head did not arrive within "
                f"{self.replay.request_timeout:g} s",
            )
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
        if self.request_id_header:
            self.send_header(self.request_id_header, self.request_id)
        if code == 429:  # when to try again: small, as the SDKs honour it (openai up to 120 s)
            self.send_header("retry-after", "1")

    def request_arrived(self) -> None:
        """The whole request has been read: the reply may take as long as it takes."""
        self.reader.deadline = None
        self.connection.settimeout(None)

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
        self.request_arrived()
        self._get(head=True)

    def do_GET(self):
        self.request_arrived()
        self._get(head=False)

    def do_PUT(self):
        self.send_error(405)

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    def read_json(self):
        """The request body as JSON, or a :class:`Refusal` that says what is wrong with it;
        once it is read, the reply may take as long as it takes."""
        body = json_body(self.headers, self.rfile, self.replay.request_timeout)
        self.request_arrived()
        return body

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
        mode), apply the faults of this turn, then stream it or send it whole. The turn is
        used up only when the reply begins (a 200 status line): a reply refused or broken
        before that leaves it for the client's retry."""
        replay = self.replay
        try:
            claim = replay.cursor.claim(messages, names)
        except ReplayMismatch as exc:
            replay.log(f"refused a chat request: {exc}")
            return self.send_json_error(400, f"{PREFIX}{exc}")
        number, turn = claim.number, claim.turn
        faults = replay.faults_for(claim)
        if faults.delay and replay.wait(faults.delay):
            return
        if faults.status:
            replay.log(f"turn {number}: answered HTTP {faults.status} (injected; turn kept)")
            return self.send_json_error(faults.status, faults.error)
        entries = replay.streamed[number - 1] if streamed else turn["chunks"]
        positions, ending, error = reply_plan({**turn, "chunks": entries}, faults, self.final)
        replay.log(
            f"turn {number}: {'streaming' if streamed else 'answering'} "
            f"{len(positions)} chunks ({ending})"
        )
        if ending == "error" and (not positions or not streamed):
            return self.send_json_error(500, error)  # an error before any output is a status
        if not streamed and ending in ("stall", "close"):  # nothing sent: the turn is kept
            if ending == "stall":
                replay.wait(None)
            self.close_connection = True
            return hang_up(self.connection)
        replay.cursor.use(claim)
        if streamed:
            recorded = replay.lines[number - 1]
            lines = [self.stream_line(entries[i], recorded[i], body) for i in positions]
            extra = self.stream_extra(turn, entries, positions, body) if ending == "end" else b""
            return self._stream([entries[i]["at"] for i in positions], lines, extra, ending, error)
        if ending == "garbage":
            self.send_body(200, self.garbage, "application/json; charset=utf-8")
        else:
            self.send_json(200, self.whole_reply(turn, positions, body))

    def _stream(self, times, lines, extra, ending, error) -> None:
        """A streamed reply: the chosen chunks' bytes (at the recorded ``times`` when the
        server has a speed; with a ping between every ``pings`` of them when it has that
        option), then ``extra`` and the ending the plan says."""
        replay = self.replay
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", self.stream_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            if replay.pings:
                lines = [
                    (self.ping + line if count and count % replay.pings == 0 else line)
                    for count, line in enumerate(lines)
                ]
            if replay.speed:  # one HTTP chunk per line, at the recorded offsets
                start = time.monotonic()
                for at, line in zip(times, lines):
                    due = start + at / replay.speed
                    if replay.wait(max(0.0, due - time.monotonic())):
                        raise ConnectionAbortedError("the server is closing")
                    self._write_chunk(line)
            else:
                batch = bytearray()
                for line in lines:
                    batch += line
                    if len(batch) >= BATCH_BYTES:
                        self._write_chunk(batch)
                        batch.clear()
                if batch:
                    self._write_chunk(batch)
            tail = {
                "error": lambda: self.stream_error(error),
                "garbage": lambda: self.garbage,
                "end": lambda: extra + self.stream_end,
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

    def stream_line(self, entry: dict, line: bytes, body: dict) -> bytes:
        """A streamed chunk's bytes as this request gets them: as recorded, unless an option
        of the request changes them (``entry``: the chunk, ``line``: its recorded bytes)."""
        return line

    def stream_extra(self, turn: dict, entries: list, positions: list, body: dict) -> bytes:
        """What a stream that ends cleanly sends after its chunks (``entries`` at
        ``positions``, streamed for the recorded ``turn``), before ``stream_end``."""
        return b""

    def _get(self, head: bool) -> None:
        raise NotImplementedError

    @staticmethod
    def final(chunk: dict) -> bool:
        raise NotImplementedError

    @staticmethod
    def chunk_bytes(entry: dict) -> bytes:
        raise NotImplementedError


def hang_up(connection) -> None:
    """End a connection both ways (what is already closed stays closed)."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the other side
