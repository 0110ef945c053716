"""A Language Server Protocol client over stdio, in the standard library: the harness's side.

A language server is a program that has read a whole code base and answers questions
about its symbols: where a name is defined, every place it is used, its type, what is
wrong in a file. The client starts it and speaks JSON-RPC 2.0 with it, each message
framed by a ``Content-Length: N`` header, a blank line and N bytes of UTF-8 JSON
(unlike MCP, whose messages are one per line).

``LspConnection(command, root=...)`` starts the server as the harness starts any program:
a list of words with no shell, a session of its own under the reaper (``reaper.py``),
the scrubbed environment (``pytest_run.child_environment``); it then sends
``initialize`` (the workspace folder, what this client can read) and ``initialized``.
``close()`` asks the server to ``shutdown`` and ``exit``, gives it ``CLOSE_GRACE``
seconds, then ends it and everything it started: **the server never outlives its
connection**.

Every wait has a limit. ``request`` waits at most ``timeout`` seconds for its answer,
then sends ``$/cancelRequest`` and raises ``LspTimeout`` (the connection stays usable).
A server that exits, or writes what the framing forbids (no ``Content-Length``, a body
that is not JSON, a message over ``MAX_MESSAGE`` bytes), breaks the connection for good:
every waiting request and every later one raises ``LspClosed`` at once, with the exit
code and the server's last words on stderr. Requests the server sends the client (some
servers wait for an answer to ``workspace/configuration``) are answered at once with
nothing; notifications (``publishDiagnostics``, logs) are counted, not kept.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from pathlib import Path
from typing import IO, Any

from .pytest_run import child_environment, close_server, exit_status, start_server

REQUEST_TIMEOUT = 10.0  # seconds a request waits for its answer, unless told otherwise
START_TIMEOUT = 15.0  # seconds the server has to answer initialize
CLOSE_GRACE = 2.0  # seconds a server has to exit after shutdown and exit
MAX_MESSAGE = 8_000_000  # bytes of one message from the server
MAX_HEADER_LINES = 16  # a frame's header lines before its blank line
STDERR_KEPT = 4_000  # bytes of the server's stderr kept (its end), to say why it died
CLIENT_INFO = {"name": "labkit", "version": "0.1.0"}
#: What this client can read: plain-text hovers, pulled diagnostics, locations.
CAPABILITIES = {
    "textDocument": {
        "hover": {"contentFormat": ["plaintext"]},
        "definition": {},
        "references": {},
        "diagnostic": {},
        "synchronization": {"didSave": False},
    },
    "workspace": {
        "workspaceFolders": True,
        "configuration": True,
        "didChangeWatchedFiles": {"dynamicRegistration": False},
        "symbol": {},
    },
    "general": {"positionEncodings": ["utf-16"]},
}


class LspError(Exception):
    """The server answered a request with an error."""


class LspTimeout(LspError):
    """No answer in time; the request was cancelled and the connection is still usable."""


class LspClosed(LspError):
    """The connection is broken: the server exited, or broke the framing."""


def encode(message: dict) -> bytes:
    """One message as it goes on the wire: the header, a blank line, the JSON body."""
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream: IO[bytes]) -> dict | None:
    """The next message of ``stream``, or None at its end; ``ValueError`` for a frame that
    breaks the protocol (no length, too long, a body that is not one JSON object)."""
    length = None
    for _ in range(MAX_HEADER_LINES):
        line = stream.readline(1000)
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.decode("ascii", errors="replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip()) if value.strip().isdigit() else None
    else:
        raise ValueError(f"a header of over {MAX_HEADER_LINES} lines")
    if length is None or length > MAX_MESSAGE:
        raise ValueError(
            "a frame without a usable Content-Length"
            if length is None
            else f"a message of {length:,} bytes, over {MAX_MESSAGE:,}"
        )
    body = stream.read(length)
    if len(body) < length:
        return None
    message = json.loads(body)
    if not isinstance(message, dict):
        raise ValueError("a message that is not a JSON object")
    return message


class LspConnection:
    """One language server, started in ``root`` (the workspace it answers about)."""

    def __init__(
        self,
        command: list[str],
        *,
        root: str | os.PathLike[str],
        timeout: float = REQUEST_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.root, self.timeout = Path(root).resolve(), timeout
        self.broken: str | None = None
        self.notifications = 0  # how many the server sent (diagnostics, logs, progress)
        self._ids, self._lock, self._writing = (
            itertools.count(1),
            threading.Lock(),
            threading.Lock(),
        )
        self._waiting: dict[int, list] = {}  # id -> [Event, message or None]
        self._stderr = bytearray()
        self.process, self._readers = start_server(
            command, self.root, child_environment(), self._read_stdout, self._read_stderr
        )
        try:
            folder = {"uri": self.root.as_uri(), "name": self.root.name}
            self.server = self.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "clientInfo": CLIENT_INFO,
                    "rootUri": folder["uri"],
                    "workspaceFolders": [folder],
                    "capabilities": CAPABILITIES,
                },
                timeout=start_timeout,
            )
            self.notify("initialized", {})
        except BaseException:
            self._break("the server did not start")  # no shutdown: it did not answer before
            self.close()
            raise

    # --- requests -------------------------------------------------------------------------

    def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send one request and return its ``result``; raises ``LspError`` (the server's
        error), ``LspTimeout`` or ``LspClosed``."""
        number, slot = next(self._ids), [threading.Event(), None]
        with self._lock:
            if self.broken:
                raise LspClosed(self.broken)
            self._waiting[number] = slot
        wait = self.timeout if timeout is None else timeout
        try:
            self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            if not slot[0].wait(wait):
                self.notify("$/cancelRequest", {"id": number})
                raise LspTimeout(
                    f"the language server did not answer {method} within "
                    f"{wait:g} s; the request was cancelled"
                )
        finally:
            with self._lock:
                self._waiting.pop(number, None)
        message = slot[1]
        if message is None:
            raise LspClosed(f"{self.broken} (during {method})")
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            raise LspError(
                f"{method}: error {error.get('code')}: {str(error.get('message'))[:500]}"
            )
        return message.get("result")

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (no answer comes); a broken connection is not an error here."""
        try:
            self._send({"jsonrpc": "2.0", "method": method, "params": params})
        except LspClosed:
            pass

    # --- the process ----------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        try:
            with self._writing:  # the reader thread answers the server's requests too
                self.process.stdin.write(encode(message))
                self.process.stdin.flush()
        except (OSError, ValueError):  # BrokenPipeError, or stdin closed already
            self._break(f"the language server has exited ({self._exit_status()})")
            raise LspClosed(self.broken) from None

    def _read_stdout(self, stream: IO[bytes]) -> None:
        with stream:
            while self.broken is None:
                try:
                    message = read_message(stream)
                except (ValueError, RecursionError) as exc:
                    self._break(f"the language server broke the protocol on stdout: {exc}")
                    return
                if message is None:
                    self._break(f"the language server exited ({self._exit_status()})")
                    return
                if "method" in message and "id" in message:  # the server asks the client
                    self._answer(message)
                elif "method" in message:
                    self.notifications += 1
                else:
                    key = message.get("id")
                    with self._lock:  # an id that is not a number answers nothing we asked
                        slot = self._waiting.get(key) if type(key) is int else None
                    if slot is not None:
                        slot[1] = message
                        slot[0].set()

    def _answer(self, message: dict) -> None:
        """Answer a request from the server with nothing: no settings, no progress bar."""
        params = message.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        result = (
            [None] * len(items)
            if message["method"] == "workspace/configuration" and isinstance(items, list)
            else None
        )
        try:
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        except LspClosed:
            pass

    def _read_stderr(self, stream: IO[bytes]) -> None:
        with stream:
            for block in iter(lambda: stream.read1(65536), b""):
                self._stderr = (self._stderr + block)[-STDERR_KEPT:]

    def _break(self, why: str) -> None:
        with self._lock:
            if self.broken is None:
                self.broken = why
            for slot in self._waiting.values():
                slot[0].set()  # its message stays None: the request raises LspClosed

    def _exit_status(self) -> str:
        return exit_status(self.process, self.stderr)

    @property
    def stderr(self) -> str:
        """The end of what the server wrote on stderr (its logs, a panic)."""
        return self._stderr.decode("utf-8", errors="replace")

    @property
    def alive(self) -> bool:
        return self.broken is None and self.process.poll() is None

    def close(self) -> None:
        """End the server: ``shutdown`` and ``exit`` if it still answers, then stop it and
        everything it started (the reaper's sweep, then its process group)."""
        if self.broken is None:
            try:
                self.request("shutdown", None, timeout=CLOSE_GRACE)
                self.notify("exit", None)
            except LspError:
                pass
        self._break("the connection was closed")
        close_server(self.process, self._readers, CLOSE_GRACE)

    def __enter__(self) -> LspConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
