"""The messages of a conversation, read for their sizes, calls and results.

Each wire format keeps text, tool calls and tool results in its own places, and the
budget and the conversation checks (``budget.py``, ``conversation.py``) ask the format
rather than knowing any shape. Ollama's and OpenAI's messages have the same shape where it
matters here: an assistant message lists ``tool_calls`` (each with a ``function``), and
each result is a ``tool`` message of its own (:class:`ToolMessages`, which both formats
take). Anthropic's is different: calls and results are content blocks
(``formats/anthropic.py``). All pure.
"""

from __future__ import annotations

import json

from ..contracts import CallRef, Message, ResultRef


def text_length(content: object) -> int:
    """The characters of a message's content: a string, or a list of parts whose ``text``
    is counted (any other part as its JSON, so nothing it carries goes uncounted)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(
            len(part["text"])
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else len(json.dumps(part, default=str))
            for part in content
        )
    return 0


def text_of(content: object) -> str:
    """A tool result's content as text (a list of parts: their ``text`` joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


class ToolMessages:
    """Sizes, calls and results of a conversation whose assistant messages list
    ``tool_calls`` and whose results are ``tool`` messages, one per call."""

    reply_role = "assistant"

    def sizes(self, message: Message) -> dict[str, int]:
        calls = message.get("tool_calls") or ()
        return {
            message.get("role"): text_length(message.get("content")),
            "thinking": len(message.get("thinking") or ""),
            "tool_calls": sum(len(json.dumps(call.get("function", call))) for call in calls),
        }

    def calls_in(self, message: Message) -> list[CallRef]:
        if message.get("role") != "assistant":
            return []
        return [
            CallRef(call.get("id"), (call.get("function") or {}).get("name"))
            for call in message.get("tool_calls") or ()
            if isinstance(call, dict)
        ]

    def results_in(self, message: Message) -> list[ResultRef]:
        if message.get("role") != "tool":
            return []
        name = message.get("tool_name") or message.get("name")
        return [ResultRef(message.get("tool_call_id"), name, text_of(message.get("content")))]

    def with_results(self, message: Message, contents: list[str]) -> Message:
        return {**message, "content": contents[0]} if contents else dict(message)
