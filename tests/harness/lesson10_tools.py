"""Small toolsets for lesson 10's tests: read-only calls that can wait for each other, and
one that writes."""

import threading

from labkit.harness.toolset import Toolset, tool

ONE_TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


class Notes(Toolset):
    """``look`` (read-only) and ``write`` (changes things). ``gate``: a barrier every
    ``look`` waits at (two looks that run at once pass it; one alone times out)."""

    def __init__(self, gate=None, slow=None):
        self.log = []
        self.lock = threading.Lock()
        self.gate = gate
        self.slow = slow or {}

    @tool(description="Look at a note.", parameters=ONE_TEXT, read_only=True)
    def look(self, text):
        if self.gate is not None:
            self.gate.wait(timeout=5)
        if text in self.slow:
            self.slow[text].wait(timeout=5)
        if text == "fail":
            raise ValueError("no such note")
        with self.lock:
            self.log.append(("look", text))
        return {"note": text.upper()}

    @tool(description="Write a note.", parameters=ONE_TEXT)
    def write(self, text):
        with self.lock:
            self.log.append(("write", text))
        return {"written": text}
