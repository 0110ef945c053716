"""A Model Context Protocol client over stdio, in the standard library: the harness's side.

An MCP server is a program the harness starts; it reads JSON-RPC 2.0 requests, one JSON
object per line, on its stdin and writes one response per line on its stdout. This is
the 2026-07-28 version of the protocol, which has no ``initialize`` handshake and no
session: every request carries ``params._meta`` with the protocol version and the
client's capabilities, and a client first asks ``server/discover`` what the server is.
(Earlier versions opened with ``initialize`` and ``notifications/initialized``.)

``MCPConnection(command, cwd=...)`` starts the server as ``run_command`` starts a program:
a list of words with no shell, a new session under the reaper (``reaper.py``), the
scrubbed environment (``pytest_run.child_environment``). ``close()`` ends it the way the
specification says (close its stdin, wait, then stop it) and then ends everything it
started: **the server never outlives its connection**, and a connection is closed when
its run ends (``with``). ``request`` matches each response to its request by ``id`` (a
server may answer out of order), and waits at most ``timeout`` seconds: then it sends
``notifications/cancelled`` and raises ``MCPTimeout``; the connection stays usable.

What the server writes is held to the protocol. A line that is not a JSON-RPC message
(garbage on stdout, or a line over ``MAX_LINE`` bytes) breaks the connection for good:
stdout is the protocol's only channel, and after a stray line the framing of every later
message is in doubt (the specification forbids it; the SDK's client logs and skips it).
The server exiting breaks it too. A broken connection raises ``MCPClosed``, at once for
a request in flight and for every later one. Every line each way is kept in
``traffic``, as sent, for a recording and the lesson's widget.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import threading
from pathlib import Path
from typing import IO, Any

from .pytest_run import child_environment, close_server, exit_status, start_server
from .shell import find_program

PROTOCOL_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "labkit", "version": "0.1.0"}
CALL_TIMEOUT = 30.0  # seconds a request waits for its response, unless told otherwise
START_TIMEOUT = 15.0  # seconds the server has to answer server/discover after it starts
CLOSE_GRACE = 2.0  # seconds a server has to exit once its stdin is closed
MAX_LINE = 4_000_000  # bytes of one message from the server
MAX_PAGES = 100  # pages of tools/list followed
STDERR_KEPT = 4_000  # bytes of the server's stderr kept (its end), to say why it died


class MCPError(Exception):
    """The server answered a request with a JSON-RPC error."""


class MCPTimeout(MCPError):
    """No response in time; the request was cancelled and the connection is still usable."""


class MCPClosed(MCPError):
    """The connection is broken: the server exited, or wrote what the protocol forbids."""


class MCPConnection:
    """One server, started by the harness and spoken to over its stdin and stdout."""

    def __init__(
        self,
        command: list[str],
        *,
        cwd: str | os.PathLike[str],
        timeout: float = CALL_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.command, self.timeout = list(command), timeout
        self.traffic: list[dict[str, str]] = []  # {"dir": "c2s" | "s2c" | "junk", "line": ...}
        self.broken: str | None = None
        self._ids, self._lock, self._waiting = itertools.count(1), threading.Lock(), {}
        self._stderr = bytearray()
        env = child_environment()
        self.process, self._readers = start_server(
            [find_program(command[0], Path(cwd), env), *command[1:]],
            cwd,
            env,
            self._read_stdout,
            self._read_stderr,
        )
        try:
            self.server = self.request("server/discover", timeout=start_timeout)
        except BaseException:
            self.close()
            raise

    # --- requests -------------------------------------------------------------------------

    def request(self, method: str, params: dict | None = None, *, timeout: float | None = None):
        """Send one request and return its ``result``; raises ``MCPError`` (the server's
        error), ``MCPTimeout`` or ``MCPClosed``."""
        number, answers = next(self._ids), queue.Queue()
        with self._lock:
            if self.broken:
                raise MCPClosed(self.broken)
            self._waiting[number] = answers
        wait = self.timeout if timeout is None else timeout
        try:
            self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": {
                **(params or {}), "_meta": META}})  # fmt: skip
            try:
                message = answers.get(timeout=wait)
            except queue.Empty:
                self.notify("notifications/cancelled", {"requestId": number,
                            "reason": f"no response within {wait:g} s"})  # fmt: skip
                raise MCPTimeout(f"the server did not answer {method} within {wait:g} s; "
                                 "the request was cancelled") from None  # fmt: skip
        finally:
            with self._lock:
                self._waiting.pop(number, None)
        if message is None:
            raise MCPClosed(f"{self.broken} (during {method})")
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            raise MCPError(f"error {error.get('code')}: {str(error.get('message'))[:500]}")
        if not isinstance(message.get("result"), dict):
            raise MCPError(f"the response to {method} holds no result object")
        return message["result"]

    def notify(self, method: str, params: dict) -> None:
        """Send a notification (no response comes)."""
        try:
            self._send({"jsonrpc": "2.0", "method": method, "params": params})
        except MCPClosed:
            pass

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists, following ``nextCursor`` (at most ``MAX_PAGES``)."""
        tools, cursor = [], None
        for _ in range(MAX_PAGES):
            page = self.request("tools/list", {"cursor": cursor} if cursor else None)
            listed = page.get("tools")
            if not isinstance(listed, list):
                raise MCPError("tools/list returned no list of tools")
            tools += listed
            cursor = page.get("nextCursor")
            if not cursor:
                return tools
        raise MCPError(f"tools/list goes on for more than {MAX_PAGES} pages")

    def call_tool(self, name: str, arguments: dict, *, timeout: float | None = None) -> dict:
        """``tools/call``: the result object (``content``, ``isError``, ``structuredContent``)."""
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)

    # --- the process --------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        self.traffic.append({"dir": "c2s", "line": line})
        try:
            self.process.stdin.write(line.encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (OSError, ValueError):  # BrokenPipeError, or stdin closed already
            self._break("the server's stdin is closed: it has exited")
            raise MCPClosed(self.broken) from None

    def _read_stdout(self, stream: IO[bytes]) -> None:
        with stream:
            while self.broken is None:
                raw = stream.readline(MAX_LINE + 1)
                if not raw:
                    self._break(f"the server exited ({self._exit_status()})")
                    return
                if len(raw) > MAX_LINE:
                    self.traffic.append({"dir": "junk", "line": raw[:200].decode(errors="replace")})
                    self._break(f"the server wrote a line over {MAX_LINE:,} bytes on stdout")
                    return
                line = raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
                message = _message(line)
                if message is None:
                    self.traffic.append({"dir": "junk", "line": line})
                    self._break(
                        "the server wrote a line that is not a JSON-RPC message on stdout, "
                        f"which the protocol keeps for messages: {line[:120]!r}"
                    )
                    return
                self.traffic.append({"dir": "s2c", "line": line})
                with self._lock:
                    waiting = self._waiting.get(message.get("id"))
                if waiting is not None and ("result" in message or "error" in message):
                    waiting.put(message)  # anything else (a notification, a late answer): kept

    def _read_stderr(self, stream: IO[bytes]) -> None:
        with stream:
            for block in iter(lambda: stream.read1(65536), b""):
                self._stderr = (self._stderr + block)[-STDERR_KEPT:]

    def _break(self, why: str) -> None:
        with self._lock:
            if self.broken is None:
                self.broken = why
            for waiting in self._waiting.values():
                waiting.put(None)

    def _exit_status(self) -> str:
        return exit_status(self.process, self.stderr)

    @property
    def stderr(self) -> str:
        """The end of what the server wrote on stderr (its logs, a traceback)."""
        return self._stderr.decode("utf-8", errors="replace")

    def close(self) -> None:
        """End the server: close its stdin, give it ``CLOSE_GRACE`` seconds to exit, then
        stop it and everything it started (the reaper's sweep, then its process group)."""
        self._break("the connection was closed")
        close_server(self.process, self._readers, CLOSE_GRACE)

    def __enter__(self) -> MCPConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: What every request carries in ``params._meta`` (2026-07-28: no session to remember it).
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


def _message(line: str) -> dict | None:
    """The JSON-RPC 2.0 message a line holds, or None when it holds none."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    return message
