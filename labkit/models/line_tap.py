"""A line tap: an HTTP transport that keeps each line of a response as it came, under the SDKs'
HTTP clients.

:class:`LineTap` is an HTTP transport: it passes every response through
unchanged, and copies the bytes of its body as the client reads them, split into
lines. The SDK keeps parsing the stream for the loop, while the capture keeps each
line exactly as the server sent it (field order, fields the SDK does not model, such
as an Ollama tool call's ``id``). It serves both HTTP clients the course's SDKs use:
``httpx`` (the ``ollama`` SDK) and ``httpx2`` (the ``openai`` and ``anthropic`` SDKs),
whose transport interfaces are the same. How Ollama writes a line is in ``go_json.py``.
"""

from __future__ import annotations

import threading
from collections import deque

import httpx
import httpx2


class LineTap(httpx.BaseTransport, httpx2.BaseTransport):
    """A transport that keeps a copy of each response's lines, as they are read.

    It wraps ``transport`` (default: ``httpx``'s; pass ``httpx2.HTTPTransport()`` for an
    ``httpx2`` client). ``take()``, called in the thread that made the request, hands
    over the :class:`LineCopy` of the latest response that thread received.
    """

    def __init__(self, transport=None):
        self.transport = transport or httpx.HTTPTransport()
        self._latest = threading.local()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.transport.handle_request(request)
        if response.headers.get("content-encoding", "identity") == "identity":
            response.stream = copy = LineCopy(response.stream)
            self._latest.copy = copy
        return response

    def take(self) -> LineCopy | None:
        copy, self._latest.copy = getattr(self._latest, "copy", None), None
        return copy

    def pairs(self, stream, reader=lambda copy: copy.next_line):
        """Each item an SDK's ``stream`` yields, paired with its text as it came:
        ``(item, text or None)``. ``reader(copy)`` gives the function that returns the next
        item's text from the response's :class:`LineCopy` (default: its next line). The
        copy is bound when the first item arrives, in the thread that made the request."""
        next_text = None
        for item in stream:
            if next_text is None:
                copy = self.take()
                next_text = reader(copy) if copy else (lambda: None)
            yield item, next_text()

    def close(self) -> None:
        self.transport.close()


class LineCopy(httpx.SyncByteStream, httpx2.SyncByteStream):
    """A response body that keeps its complete lines (bytes, without the newline) in ``lines``.

    Splitting looks only at new bytes, so the cost stays linear in the body's length.
    """

    def __init__(self, stream):
        self.stream = stream
        self.lines = deque()
        self._pending = bytearray()

    def __iter__(self):
        for data in self.stream:
            start = 0
            while (end := data.find(b"\n", start)) != -1:
                self._pending += data[start:end]
                self.lines.append(bytes(self._pending))
                self._pending.clear()
                start = end + 1
            self._pending += data[start:]
            yield data
        if self._pending:  # a last line without its newline
            self.lines.append(bytes(self._pending))
            self._pending.clear()

    def next_line(self) -> str | None:
        """The oldest line not yet handed out, as text, or None if none is complete."""
        while self.lines:
            line = self.lines.popleft()
            if line.strip():  # the SDK skips nothing, but a blank line carries no chunk
                return line.decode("utf-8", errors="replace")
        return None

    def close(self) -> None:
        self.stream.close()
