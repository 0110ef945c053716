"""One request's body read safely, whatever its API: within a deadline, capped in size and
nesting, JSON that any reply could echo.

A replay server's handler reads every request through a :class:`DeadlineReader`: the head
and the body must all arrive by one deadline, counted from the connection's start, however
slowly their bytes trickle (:class:`LateRequest` when they do not; the handler answers 408).
:func:`json_body` then reads the body a ``Content-Length`` announces and parses it, or raises
a :class:`Refusal` (an HTTP status and the words of its error): a chunked body, conflicting
or absurd lengths, more than :data:`MAX_BODY_BYTES`, a body cut short, not UTF-8, not JSON,
``NaN``, nesting deeper than :data:`MAX_DEPTH`, or text that is not Unicode (a lone surrogate,
which ``json`` reads from ``"\\ud800"`` and no reply could echo). What the body must hold
for an API is its request-shape table's to say (``request_shape.py``).
"""

from __future__ import annotations

import io
import json
import re
import time

MAX_BODY_BYTES = 16 * 2**20  # a request body beyond this gets 413 (the course's are < 1 MB)
MAX_DEPTH = 64  # nesting a request body may have (the course's reach 8)


class Refusal(Exception):
    """A request answered with an HTTP error: ``status`` and the text of its error."""

    def __init__(self, status: int, error: str):
        super().__init__(error)
        self.status, self.error = status, error


class LateRequest(Exception):
    """The request's head and body did not all arrive by its deadline (not an ``OSError``, so
    ``http.server`` does not drop the connection silently, as it does on a socket timeout)."""


class DeadlineReader(io.RawIOBase):
    """A connection's incoming bytes, each read allowed only the time left before
    ``deadline`` (``time.monotonic()``; None: no limit), so a client that trickles its request
    a byte at a time cannot hold a thread longer than the deadline."""

    def __init__(self, connection, deadline: float | None):
        self.connection = connection
        self.deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.deadline is None:
            return self.connection.recv_into(buffer)
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise LateRequest
        self.connection.settimeout(left)
        try:
            return self.connection.recv_into(buffer)
        except TimeoutError:
            raise LateRequest from None


def json_body(headers, rfile, timeout: float):
    """The body that ``headers`` announce, read from ``rfile`` and parsed; or a
    :class:`Refusal` saying what is wrong with it (``timeout``: the deadline's seconds, for
    the 408's words)."""
    if headers.get("Transfer-Encoding"):
        raise Refusal(411, "send the request body with a Content-Length, not chunked")
    lengths = set(headers.get_all("Content-Length") or [])
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
    data = _read_exactly(rfile, int(text), timeout)
    if not data.strip():
        raise Refusal(400, "missing request body")
    try:
        body = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise Refusal(400, f"the request body nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # not UTF-8, not JSON, NaN or Infinity
        raise Refusal(400, f"the request body is not JSON ({exc})") from None
    problem = body_problem(body)
    if problem:
        raise Refusal(400, problem)
    return body


def _read_exactly(rfile, size: int, timeout: float) -> bytes:
    data = bytearray()
    while len(data) < size:
        try:
            piece = rfile.read1(min(size - len(data), 1 << 16))
        except LateRequest:
            raise Refusal(
                408,
                f"the request body did not arrive within {timeout:g} s "
                f"({len(data):,} of {size:,} bytes came)",
            ) from None
        if not piece:
            raise Refusal(400, f"the request body ended after {len(data):,} of {size:,} bytes")
        data += piece
    return bytes(data)


def body_problem(body) -> str | None:
    """What makes a parsed body unusable whatever its API, or None: nesting deeper than
    :data:`MAX_DEPTH`, or text that is not Unicode, named by its place. Checked without
    recursion."""
    stack = [(body, 1, "")]
    while stack:
        item, depth, place = stack.pop()
        if isinstance(item, str):
            if not _is_unicode(item):
                return (
                    f"{place or 'the request body'} is not Unicode text (it holds a lone "
                    "surrogate, such as \\ud800, which no character is)"
                )
        elif isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                return f"the request body nests deeper than {MAX_DEPTH} levels"
            if isinstance(item, dict):
                for key, child in item.items():
                    if not _is_unicode(key):
                        return f"a key in {place or 'the request body'} is not Unicode text"
                    stack.append((child, depth + 1, f"{place}.{key}"[:200].lstrip(".")))
            else:
                stack.extend(
                    (child, depth + 1, f"{place}[{i}]"[:200]) for i, child in enumerate(item)
                )
    return None


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")
