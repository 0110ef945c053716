"""Server-sent events: how OpenAI's and Anthropic's servers write a stream, and how a capture
keeps each event exactly as it came.

An event is a few ``field: value`` lines ended by a blank line. Both APIs put the
chunk's JSON in one ``data`` line; Anthropic's events also name their type in an
``event`` line (``event: content_block_delta``), and OpenAI's stream ends with
``data: [DONE]``, which carries no chunk. OpenAI writes compact JSON, Anthropic JSON
with spaces after ``,`` and ``:`` (as their documentation shows each).

A recording keeps an event as its text without the closing blank line (``event: ...\\n
data: {...}``): the replay server sends that text back byte for byte, and a lesson
shows it. :class:`EventReader` finds, among the lines a ``LineTap`` copied as they
came, the event behind each chunk the SDK yields: the SDKs skip ``[DONE]``, comments
(``: keep-alive``) and Anthropic's ``ping`` events, and so does the reader.
"""

from __future__ import annotations

import json

OPENAI_DONE = "data: [DONE]"


def openai_event(chunk: dict) -> str:
    """A chat completion chunk as OpenAI's server writes its event."""
    return "data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))


def anthropic_event(event: dict) -> str:
    """A Messages stream event as Anthropic's server writes it: its type, then its data."""
    return f"event: {event.get('type')}\ndata: " + json.dumps(event, ensure_ascii=False)


def event_fields(text: str) -> tuple[str | None, str]:
    """``(event name or None, data)`` of one event's text, read as the SSE rules say: the
    value after ``field:`` loses one leading space; several data lines join with newlines."""
    name, data = None, []
    for line in text.split("\n"):
        field, _, value = line.rstrip("\r").partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return name, "\n".join(data)


class EventReader:
    """The events of one streamed response, from the lines a ``LineCopy`` kept, one per
    chunk the SDK yields."""

    def __init__(self, copy):
        self.copy = copy
        self.pending = []  # the lines of the event being read
        self.pings = []  # the text of each ping passed and not yet taken (``take_pings``)

    def next_event(self) -> str | None:
        """The text of the next event that carries a chunk, or None if none is complete.

        An event ends at its ``data`` line (each event of both APIs has one); the reader
        does not wait for the blank line, which the SDK reads only with the next event.
        """
        while (line := self.copy.next_line()) is not None:
            line = line.rstrip("\r")
            if line.startswith(":"):
                continue  # a comment: servers send them to keep a connection open
            self.pending.append(line)
            if line.startswith("data:"):
                text, self.pending = "\n".join(self.pending), []
                name, data = event_fields(text)
                if name == "ping":
                    self.pings.append(text)
                elif data.strip() and data != "[DONE]":
                    return text
        return None

    def take_pings(self) -> list[str]:
        """The pings passed since the last call, in order."""
        pings, self.pings = self.pings, []
        return pings


def ping_of(event: str) -> dict:
    """A ping event's chunk: its JSON (``{"type": "ping"}``), whatever its data holds."""
    try:
        chunk = json.loads(event_fields(event)[1])
    except ValueError:
        chunk = None
    return chunk if isinstance(chunk, dict) and chunk.get("type") == "ping" else {"type": "ping"}


def chunk_of(event: str | None, part) -> dict:
    """The chunk as the server sent it (its event's JSON); the SDK's reading if the event
    was not kept or does not hold a JSON object."""
    if event is not None:
        try:
            chunk = json.loads(event_fields(event)[1])
        except ValueError:
            chunk = None
        if isinstance(chunk, dict):
            return chunk
    return part.to_dict(mode="json")
