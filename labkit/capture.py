"""Capture what a model sends: each request and each raw chunk with its arrival time."""

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
            stream = self.chat(messages, tool_schemas)
            for chunk in stream:
                turn["chunks"].append({"at": round(self.clock() - start, 6),
                                       "chunk": copy.deepcopy(chunk)})
                yield chunk
        except Exception as exc:
            turn["error"] = str(exc) or type(exc).__name__  # as the loop reports it
            raise
        finally:
            getattr(stream, "close", lambda: None)()
