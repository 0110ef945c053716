"""How a reply streams in and how tool results go back: the part of the loop that is per provider.

The loop is the same for every model server; what differs is the wire format. A
format is two small pure pieces, side by side here so they can be compared:

- ``assembler()``: folds the reply's chunks, one at a time, into a turn that says
  whether it finished cleanly (``unfinished``), whether it broke the format
  (``problem``), the assistant message to keep, its text and its tool ``calls``;
- ``tool_results(calls, results)``: the messages that carry a turn's results back.

A chat says which format it speaks with a ``wire_format`` attribute (a format, or its
name); a chat that says nothing speaks Ollama's.
"""

from __future__ import annotations

import json

from .contracts import Message, ToolCall
from .turns import TurnAssembler


def tool_message(name: str, result) -> dict:
    """The message that carries a tool's result back to the model (Ollama's shape)."""
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}


class Ollama:
    """Ollama's ``/api/chat``: NDJSON chunks, tool calls whole, ``done`` on the last chunk;
    each result goes back as its own ``tool`` message naming the tool."""

    name = "ollama"

    def assembler(self) -> TurnAssembler:
        return TurnAssembler()

    def tool_results(self, calls: list[ToolCall], results: list) -> list[Message]:
        return [tool_message(call.name, result) for call, result in zip(calls, results)]


OLLAMA = Ollama()
FORMATS = {OLLAMA.name: OLLAMA}


def format_of(chat):
    """The wire format ``chat`` speaks: its ``wire_format`` (a format or a name), else Ollama's."""
    chosen = getattr(chat, "wire_format", None)
    if chosen is None:
        return OLLAMA
    if isinstance(chosen, str):
        if chosen not in FORMATS:
            raise ValueError(f"unknown wire format {chosen!r}; the formats are {sorted(FORMATS)}")
        return FORMATS[chosen]
    return chosen
