"""Ollama's ``/api/chat`` stream: NDJSON chunks, tool calls whole, ``done`` on the last chunk.

Each chunk holds ``message`` (``role``, a ``content`` fragment, an optional ``thinking``
fragment, optional ``tool_calls``, each ``{"function": {"name": ..., "arguments":
{...}}}`` and already whole) and ``done``. The last chunk says ``done: true`` and why the
reply ended in ``done_reason``: ``"stop"`` is a clean end; ``"length"`` means the
output-length limit cut the reply, and no tool from it may run. A line ``{"error": ...}``
is the server failing mid-stream.

:class:`OllamaAssembler` folds the chunks into one assistant message: the content and
thinking fragments kept in lists and joined once (linear in the stream's length), the
tool calls frozen as they arrive, so the message a turn gives is read-only. Each result
goes back as its own ``tool`` message naming the tool (:func:`tool_message`).

Pure: no I/O, no clock. The loop, the lessons' chunk stepper and the exercises use this
same code, so what a learner steps through is what the harness does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..contracts import Chunk, Message, ToolCall, Turn
from ..frozen import FrozenDict, FrozenList, TooDeep, freeze
from .assembly import MAX_ARGUMENT_DEPTH, kind
from .messages import ToolMessages


class OllamaAssembler:
    """Folds Ollama chat chunks one at a time (``add``); ``turn()`` judges what arrived.

    After the first malformed chunk it keeps the ``problem`` and ignores the rest.
    """

    def __init__(self) -> None:
        self.content: list[str] = []
        self.thinking: list[str] = []
        self.tool_calls: list = []
        self.done = False
        self.done_reason: str | None = None
        self.problem: str | None = None
        self.chunks = 0

    def add(self, chunk: Chunk) -> str:
        """Fold one chunk in and return the text fragment it carried ('' if none)."""
        self.chunks += 1
        if self.problem is not None:
            return ""
        # Most chunks carry a fragment of text and nothing else: they take this short way,
        # which applies the same rules as _checked_add to exactly that shape.
        message = chunk.get("message") if type(chunk) is dict else None
        if (
            type(message) is dict
            and not self.done
            and "tool_calls" not in message
            and "error" not in chunk
            and chunk.get("done", False) is False
            and chunk.get("done_reason") is None
        ):
            text, thinking = message.get("content"), message.get("thinking")
            if (text is None or type(text) is str) and (thinking is None or type(thinking) is str):
                if text:
                    self.content.append(text)
                if thinking:
                    self.thinking.append(thinking)
                return text or ""
        return self._checked_add(chunk)

    def _checked_add(self, chunk: Chunk) -> str:
        """``add`` for any chunk: every rule of the format checked, in order."""
        self.problem = _problem_with(chunk, self.chunks, self.done)
        if self.problem is not None:
            return ""
        message = chunk["message"]
        try:
            calls = freeze(message.get("tool_calls") or [], MAX_ARGUMENT_DEPTH)
        except TooDeep as exc:
            self.problem = f"chunk {self.chunks}: a tool call is {exc}"
            return ""
        text, thinking = message.get("content"), message.get("thinking")
        if text:
            self.content.append(text)
        if thinking:
            self.thinking.append(thinking)
        self.tool_calls.extend(calls)
        if chunk.get("done"):
            self.done = True
            self.done_reason = chunk.get("done_reason")
        return text or ""

    def turn(self) -> Turn:
        """The reply so far: its message, and whether its calls may run."""
        text = "".join(self.content)
        message = {"role": "assistant", "content": text}
        if self.thinking:
            message["thinking"] = "".join(self.thinking)
        if self.tool_calls:
            message["tool_calls"] = FrozenList(self.tool_calls)  # its calls are frozen already
        unfinished = unfinished_reason(self.done, self.done_reason)
        calls = []
        if self.problem is None and unfinished is None:
            calls = [
                ToolCall(call.get("id"), call["function"]["name"], call["function"]["arguments"])
                for call in self.tool_calls
            ]
        return Turn(
            FrozenDict(message),
            text,
            calls,
            self.done,
            self.done_reason,
            self.problem,
            unfinished,
            self.chunks,
        )


def unfinished_reason(done: bool, done_reason: str | None) -> str | None:
    """Why a reply whose final chunk did (or did not) arrive is not finished cleanly."""
    if not done:
        return "the stream ended without a 'done' chunk"
    if done_reason == "length":
        return "the reply was cut by the output-length limit (done_reason 'length')"
    return None


def assemble_turn(chunks: Iterable[Chunk]) -> Turn:
    """Fold a whole sequence of Ollama chunks into a :class:`Turn`."""
    assembler = OllamaAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.turn()


def tool_message(name: str, result: object) -> Message:
    """The message that carries a tool's result back to the model (Ollama's shape)."""
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}


class Ollama(ToolMessages):
    """Ollama's ``/api/chat``: NDJSON chunks, tool calls whole, ``done`` on the last chunk;
    each result goes back as its own ``tool`` message naming the tool."""

    name = "ollama"

    def assembler(self) -> OllamaAssembler:
        return OllamaAssembler()

    def tool_results(self, calls: list[ToolCall], results: list) -> list[Message]:
        return [tool_message(call.name, result) for call, result in zip(calls, results)]

    def tool_schema(self, name: str, description: str, parameters: dict) -> dict:
        """``{"type": "function", "function": {...}}``: the loop's own shape."""
        problem = self.tool_name_problem(name)
        if problem:
            raise ValueError(problem)
        function = {"name": name, "description": description, "parameters": parameters}
        return {"type": "function", "function": function}

    def tool_name_problem(self, name: str) -> str | None:
        """Ollama documents no rule for a tool's name: any text but none."""
        return None if isinstance(name, str) and name else "a tool's name is non-empty text"


FORMAT = Ollama()


def _problem_with(chunk: object, number: int, after_done: bool) -> str | None:
    """Say what is wrong with a chunk, or return None when it is well formed."""
    if after_done:
        return f"chunk {number} arrived after the final (done) chunk"
    if not isinstance(chunk, dict):
        return f"chunk {number} is {kind(chunk)}, not a JSON object"
    message = chunk.get("message")
    if not isinstance(message, dict):
        if "error" in chunk:
            return f"chunk {number} is an error from the server: {chunk['error']}"
        return f"chunk {number} has no 'message' object"
    content, thinking = message.get("content"), message.get("thinking")
    if not (content is None or isinstance(content, str)):
        return f"chunk {number}: message.content is {kind(content)}, not text"
    if not (thinking is None or isinstance(thinking, str)):
        return f"chunk {number}: message.thinking is {kind(thinking)}, not text"
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            return f"chunk {number}: message.tool_calls is {kind(calls)}, not a list"
        for index, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if not isinstance(name, str) or not name:
                return f"chunk {number}: tool call {index} has no function name"
            arguments = function.get("arguments")
            if not isinstance(arguments, dict):
                return (
                    f"chunk {number}: the arguments of tool call {index} ({name[:100]!r}) are "
                    f"{kind(arguments)}, not a JSON object"
                )
    done = chunk.get("done", False)
    if done is not True and done is not False:
        return f"chunk {number}: 'done' is {done!r}, not true or false"
    reason = chunk.get("done_reason")
    if not (reason is None or isinstance(reason, str)):
        return f"chunk {number}: 'done_reason' is {reason!r}, not text"
    if "error" in chunk:
        return f"chunk {number} is an error from the server: {chunk['error']}"
    return None
