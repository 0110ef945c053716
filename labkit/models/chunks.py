"""Ollama chat chunks and tool calls, written by hand.

One builder for everything that makes chunks without a server: the scripted model
(``scripted.py``), the exercises' cases and the tests. A chunk is what one line of
Ollama's ``/api/chat`` stream holds: ``model``, ``created_at``, the ``message`` so
far (``role``, ``content``, optional ``thinking`` and ``tool_calls``) and ``done``;
the final one adds ``done_reason`` and, from a real server, its counters.
"""

from __future__ import annotations

CREATED_AT = "2026-12-01T09:00:00Z"


def call(name: str, **arguments) -> dict:
    """A tool call as Ollama sends it: the name, and the arguments as a JSON object."""
    return {"function": {"name": name, "arguments": arguments}}


def chunk(content: str | None = "", *, thinking: str | None = None, tool_calls: list | None = None,
          done: bool = False, done_reason: str = "stop", model: str = "scripted",
          created_at: str = CREATED_AT, **extra) -> dict:
    """One chat chunk. ``content=None`` leaves ``content`` out of the message (a server may);
    ``done_reason`` is written on the final (``done``) chunk only; ``extra`` goes last."""
    message = {"role": "assistant"}
    if content is not None:
        message["content"] = content
    if thinking is not None:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    item = {"model": model, "created_at": created_at, "message": message, "done": done}
    if done:
        item["done_reason"] = done_reason
    item.update(extra)
    return item
