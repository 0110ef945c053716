"""Capture what a model sends: each request and each raw chunk with its arrival time.

When the ``chat`` can say how each chunk came over the wire (it has a ``wire``
method, as ``OllamaModel``, ``ReplayModel`` and ``ScriptedChat`` do), the capture
keeps that NDJSON line beside the chunk, exactly as it was sent.
"""

from __future__ import annotations

import copy
import time

from .replay import tool_names


class CapturingChat:
    """Wraps a ``chat`` callable and keeps ``turns`` in the recording's shape.

    ``clock`` gives the time in seconds; a scripted model passes its own so that its
    planned arrival times, not this machine's speed, end up in the recording.
    """

    def __init__(self, chat, clock=time.monotonic):
        self.chat = chat
        self.clock = clock
        self.turns = []

    def __call__(self, messages, tool_schemas):
        turn = {"request": {"messages": copy.deepcopy(messages), "tools": tool_names(tool_schemas)},
                "chunks": []}
        self.turns.append(turn)
        return self._stream(turn, messages, tool_schemas)

    def _stream(self, turn, messages, tool_schemas):
        start = self.clock()
        stream = None
        try:
            stream = _with_lines(self.chat, messages, tool_schemas)
            for chunk, line in stream:
                entry = {"at": round(self.clock() - start, 6), "chunk": copy.deepcopy(chunk)}
                if line is not None:
                    entry["line"] = line
                turn["chunks"].append(entry)
                yield chunk
        except Exception as exc:
            turn["error"] = str(exc) or type(exc).__name__  # as the loop reports it
            raise
        finally:
            getattr(stream, "close", lambda: None)()


def _with_lines(chat, messages, tool_schemas):
    """``(chunk, line or None)`` pairs from ``chat``: its own lines when it has a wire."""
    wire = getattr(chat, "wire", None)
    if callable(wire):
        return wire(messages, tool_schemas)
    return _no_lines(chat(messages, tool_schemas))


def _no_lines(stream):
    try:
        for chunk in stream:
            yield chunk, None
    finally:
        getattr(stream, "close", lambda: None)()
