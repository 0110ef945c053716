"""How a reply streams in and how tool results go back: the part of the loop that is per provider.

The loop is the same for every model server; what differs is the wire format. A
format is two small pure pieces, and the three the course knows sit side by side so
they can be compared: Ollama's here, OpenAI's in ``openai_format.py`` and Anthropic's
in ``anthropic_format.py``:

- ``assembler()``: folds the reply's chunks, one at a time, into a turn that says
  whether it finished cleanly (``unfinished``), whether it broke the format
  (``problem``), the assistant message to keep, its text and its tool ``calls``;
- ``tool_results(calls, results)``: the messages that carry a turn's results back.

A chat says which format it speaks with a ``wire_format`` attribute (a format, or its
name); a chat that says nothing speaks Ollama's.

- a tool call arrives: Ollama whole, on one chunk; OpenAI in fragments by ``index``;
  Anthropic in ``input_json_delta`` fragments of a block;
- complete when: ``done: true``; a choice's ``finish_reason``; ``message_stop``;
- refused end: ``done_reason "length"``; ``finish_reason "length"``;
  ``stop_reason "max_tokens"``;
- results go back as: one ``tool`` message each, naming the tool; one ``tool`` message each,
  naming the ``tool_call_id``; one ``user`` message of ``tool_result`` blocks, naming each
  ``tool_use_id``.

The loop keeps the system prompt as its first message for every format; a model whose
API wants it elsewhere (Anthropic's ``system`` parameter) moves it when it sends the request.
"""

from __future__ import annotations

import json

from .anthropic_format import ANTHROPIC
from .contracts import Message, ToolCall
from .openai_format import OPENAI
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
FORMATS = {wire.name: wire for wire in (OLLAMA, OPENAI, ANTHROPIC)}


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
