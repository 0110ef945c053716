"""A replay server: Ollama's HTTP API on loopback, answering from a recording.

With it the live path (``OllamaModel``, the official SDK, real HTTP and NDJSON
streaming) runs offline. Each ``POST /api/chat`` gets the next recorded turn,
streamed as chunked NDJSON; in strict mode a request that differs from the
recorded one gets an HTTP 400 whose ``error`` names the first difference. Faults
can be injected into one reply for lessons and tests.

The server never pretends to be a model: ``/api/version`` and ``/api/tags`` say
it is the labkit replay server and which recording it serves, so a capture made
through it keeps the recording's own provenance.

It runs in background threads (no event loop), so a notebook kernel can use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from dataclasses import dataclass, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .recording import load_recording
from .replay import first_difference

SERVER_VERSION = "labkit-replay-0.1.0"
NOT_JSON = b'{"model": "scripted", "message": {"role": "assistant", "content": "cut\n'
BATCH_BYTES = 64 * 1024  # unpaced replies go out in HTTP chunks of about this size


@dataclass(frozen=True)
class Faults:
    """Ways to break one reply on purpose. All are off by default.

    ``turn``: the request (1 = the first) they apply to. ``drop_done``: leave out
    the final ``done`` chunk. ``close_after``: close the connection after N chunks.
    ``error_after``: after N chunks send an ``{"error": error}`` line, as Ollama
    does when it fails mid-reply. ``garbage_after``: after N chunks send a line
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
        if isinstance(self.turn, bool) or not isinstance(self.turn, int) or self.turn < 1:
            raise ValueError(f"turn counts requests from 1, got {self.turn!r}")
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


def serve_recording(recording, *, port: int = 0, strict: bool = True, speed: float | None = None,
                    log=None, **faults) -> "ReplayServer":
    """Start serving ``recording`` (a dict, or the path of a recording file) on 127.0.0.1.

    Returns a running :class:`ReplayServer`; use it in a ``with`` block, or call
    ``close()``. ``port=0`` picks a free port (see ``.url``). ``speed``: None
    streams as fast as the client reads, 1.0 at the recorded pace. ``log(line)``
    hears about each chat request. ``faults``: see :class:`Faults`.
    """
    return ReplayServer(recording, port=port, strict=strict, speed=speed, log=log,
                        faults=Faults.from_keywords(faults))


class ReplayServer:
    """A running replay server. ``url`` is its address, for ``OllamaModel(host=...)``.

    Chat requests get the recording's turns in order. A request with as many
    messages as the first recorded one begins a new conversation: the recording
    starts over, so one server can answer run after run. ``chat_requests`` keeps
    each chat request's JSON body as it arrived: what the client really sent.
    """

    def __init__(self, recording, *, port=0, strict=True, speed=None, log=None,
                 faults: Faults = NO_FAULTS):
        if isinstance(recording, (str, os.PathLike)):
            path, recording = Path(recording), load_recording(recording)
            name, digest = path.name, hashlib.sha256(path.read_bytes())
        else:  # a recording in memory: hash its canonical JSON
            name = "recording"
            digest = hashlib.sha256(json.dumps(recording, sort_keys=True).encode())
        self.recording = recording
        self.turns = recording["turns"]
        self.strict = strict
        self.speed = speed
        self.faults = faults
        self.log = log or (lambda line: None)
        self.requests = 0  # chat requests of the current conversation
        self.lines = [[_line(entry["chunk"]) for entry in turn["chunks"]] for turn in self.turns]
        self.chat_requests = []
        self.identity = {
            "server": "labkit replay server", "recording": name,
            "recording_sha256": digest.hexdigest(),
            "turns": len(self.turns), "provenance": recording["provenance"],
            "note": "no model runs here: every reply is read from the recording"}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._connections = set()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.replay = self
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name=f"labkit replay server {self.url}", daemon=True)
        self._thread.start()

    def next_turn(self, body) -> tuple[int, dict | str]:
        """Pick the turn that answers a chat request: ``(number, turn)``, or
        ``(HTTP status, error text)`` when the request cannot be answered."""
        self.chat_requests.append(body)  # list.append is atomic: no lock needed
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list):
            return 400, "labkit replay server: the request has no 'messages' list"
        if body.get("stream") is False:
            return 400, "labkit replay server: it only streams; send stream=true"
        with self._lock:
            if self.requests and len(messages) == len(self.turns[0]["request"]["messages"]):
                self.requests = 0  # a new conversation: start the recording over
            self.requests += 1
            number = self.requests
        if number > len(self.turns):
            return 400, (f"labkit replay server: the recording has {len(self.turns)} turns, "
                         f"but this is request {number} of the conversation")
        turn = self.turns[number - 1]
        if self.strict:
            names = [(t.get("function") or {}).get("name") for t in body.get("tools") or []
                     if isinstance(t, dict)]
            difference = first_difference(turn["request"], messages, names)
            if difference:
                return 400, (f"labkit replay server: turn {number}: the request does not "
                             f"match the recording: {difference}")
        return number, turn

    @property
    def model_entry(self) -> dict:
        """How ``/api/tags`` and ``/api/show`` describe the served recording: not as a model."""
        stem = Path(self.identity["recording"]).stem
        return {"name": f"labkit-replay:{stem}", "model": f"labkit-replay:{stem}",
                "digest": self.identity["recording_sha256"], "size": 0,
                "details": {"format": "labkit-recording", "family": "labkit-replay",
                            "parameter_size": "0", "quantization_level": "none"}}

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


def _hang_up(connection) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the other side


def _line(payload: dict) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class _Handler(BaseHTTPRequestHandler):
    """One HTTP request. Each reply ends its connection, so no idle keep-alive connection
    can hold up shutdown; chat replies stream as chunked NDJSON."""

    protocol_version = "HTTP/1.1"
    server_version = "labkit-replay"

    def setup(self):
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

    def do_GET(self):
        replay = self.server.replay
        if self.path in ("/", ""):
            self._send(200, b"labkit replay server is running (not Ollama)", "text/plain")
        elif self.path == "/api/version":
            self._send_json(200, {"version": SERVER_VERSION, "labkit_replay": replay.identity})
        elif self.path == "/api/tags":
            self._send_json(200, {"models": [replay.model_entry]})
        else:
            self._send_error(404, f"labkit replay server: no GET {self.path}")

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, OSError):
            return self._send_error(400, "labkit replay server: the request body is not JSON")
        if self.path == "/api/chat":
            self._chat(body)
        elif self.path == "/api/show":
            entry = self.server.replay.model_entry
            self._send_json(200, {"modelfile": "# labkit replay server: replies come from a "
                                  "recording", "parameters": "", "template": "",
                                  "details": entry["details"],
                                  "model_info": {"general.architecture": "labkit-replay"},
                                  "capabilities": ["completion", "tools", "thinking"]})
        else:
            self._send_error(404, f"labkit replay server: no POST {self.path}")

    def _chat(self, body):
        replay = self.server.replay
        number, turn = replay.next_turn(body)
        if isinstance(turn, str):
            replay.log(f"refused a chat request: {turn}")
            return self._send_error(number, turn)
        faults = replay.faults if number == replay.faults.turn else NO_FAULTS
        if faults.delay and replay.wait(faults.delay):
            return
        if faults.status:
            replay.log(f"turn {number}: answered HTTP {faults.status} (injected)")
            return self._send_error(faults.status, faults.error)
        positions, ending, error = reply_plan(turn, faults)
        replay.log(f"turn {number}: streaming {len(positions)} chunks ({ending})")
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self._stream(turn["chunks"], replay.lines[number - 1], positions, replay)
            if ending == "error":
                self._write_chunk(_line({"error": error}))
            if ending == "garbage":
                self._write_chunk(NOT_JSON)
            if ending == "stall":
                replay.wait(None)
            if ending in ("end", "error", "garbage"):
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client stopped reading (the loop abandoned the stream), or we are closing

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

    def _send_json(self, status: int, payload: dict) -> None:
        self._send(status, _line(payload), "application/json")

    def _send_error(self, status: int, error: str) -> None:
        self._send_json(status, {"error": error})

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.close_connection = True
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass
