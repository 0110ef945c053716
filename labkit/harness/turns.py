"""Fold a streamed model response (Ollama chat chunks) into one assistant message.

This is the pure heart of a turn: no I/O, no clock. The loop, the widgets and the
exercises all use it, so what a learner steps through is what the harness does.

Assembly is linear in the stream's length: fragments are kept in lists and joined
once, never appended to a growing string. Tool calls are frozen as they arrive
(``frozen``), so the message a turn gives is read-only: the loop can share it
with the model and the events without copying it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .contracts import ToolCall
from .frozen import FrozenDict, FrozenList, TooDeep, freeze

#: Levels of nesting a tool call may have (its arguments included); Ollama's are a few deep.
MAX_CALL_DEPTH = 32


@dataclass(frozen=True)
class Turn:
    """One assembled model response.

    ``message`` is the assistant message as it goes into the conversation (read-only).
    ``done`` says the final chunk arrived; ``done_reason`` is what it said
    (``"stop"``, ``"length"``, ...). ``problem`` names the first malformed chunk,
    if any: a turn with a problem is never dispatched.
    """

    message: dict
    done: bool = False
    done_reason: str | None = None
    problem: str | None = None
    chunks: int = 0

    @property
    def tool_calls(self) -> list:
        return self.message.get("tool_calls", [])

    @property
    def may_dispatch(self) -> bool:
        """True when the stream finished normally, so its tool calls may run."""
        return self.problem is None and self.done and self.done_reason != "length"

    # What the loop reads of any format's turn (see formats.py):

    @property
    def unfinished(self) -> str | None:
        """Why the turn did not finish cleanly, or None when it did."""
        if not self.done:
            return "the stream ended without a 'done' chunk"
        if self.done_reason == "length":
            return "the reply was cut by the output-length limit (done_reason 'length')"
        return None

    @property
    def text(self) -> str:
        return self.message["content"]

    @property
    def calls(self) -> list:
        """The tool calls, each a :class:`ToolCall` (Ollama sends them whole)."""
        return [
            ToolCall(call.get("id"), call["function"]["name"], call["function"]["arguments"])
            for call in self.tool_calls
        ]


@dataclass
class TurnAssembler:
    """Accumulates chunks one at a time; ``turn()`` gives the message so far."""

    content: list = field(default_factory=list)
    thinking: list = field(default_factory=list)
    tool_calls: list = field(default_factory=list)
    done: bool = False
    done_reason: str | None = None
    problem: str | None = None
    chunks: int = 0

    def add(self, chunk) -> str:
        """Fold one chunk in and return the text fragment it carried ('' if none).

        After the first malformed chunk the assembler records the problem and
        ignores everything that follows.
        """
        self.chunks += 1
        if self.problem is None:
            self.problem = _problem_with(chunk, self.chunks, self.done)
            if self.problem is None:
                try:
                    return self._fold(chunk) or ""
                except TooDeep as exc:
                    self.problem = f"chunk {self.chunks}: a tool call is {exc}"
        return ""

    def _fold(self, chunk: dict) -> str:
        message = chunk["message"]
        calls = freeze(message.get("tool_calls") or [], MAX_CALL_DEPTH)  # first: it may refuse
        text = message.get("content")
        if text:
            self.content.append(text)
        thinking = message.get("thinking")
        if thinking:
            self.thinking.append(thinking)
        self.tool_calls.extend(calls)
        if chunk.get("done"):
            self.done = True
            self.done_reason = chunk.get("done_reason")
        return text

    def turn(self) -> Turn:
        message = {"role": "assistant", "content": "".join(self.content)}
        if self.thinking:
            message["thinking"] = "".join(self.thinking)
        if self.tool_calls:
            message["tool_calls"] = FrozenList(self.tool_calls)  # its calls are frozen already
        return Turn(FrozenDict(message), self.done, self.done_reason, self.problem, self.chunks)


def assemble_turn(chunks) -> Turn:
    """Fold a whole sequence of chunks into a :class:`Turn`."""
    assembler = TurnAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.turn()


def _problem_with(chunk, number: int, after_done: bool) -> str | None:
    """Say what is wrong with a chunk, or return None when it is well formed.

    Called once per chunk, so the common case (text in a well-formed chunk) takes
    the fewest steps.
    """
    if after_done:
        return f"chunk {number} arrived after the final (done) chunk"
    if not isinstance(chunk, dict):
        return f"chunk {number} is a {type(chunk).__name__}, not a JSON object"
    message = chunk.get("message")
    if not isinstance(message, dict):
        if "error" in chunk:
            return f"chunk {number} is an error from the server: {chunk['error']}"
        return f"chunk {number} has no 'message' object"
    content, thinking = message.get("content"), message.get("thinking")
    if not (content is None or isinstance(content, str)):
        return f"chunk {number}: message.content is a {type(content).__name__}, not text"
    if not (thinking is None or isinstance(thinking, str)):
        return f"chunk {number}: message.thinking is a {type(thinking).__name__}, not text"
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            return f"chunk {number}: message.tool_calls is a {type(calls).__name__}, not a list"
        for index, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if not isinstance(name, str) or not name:
                return f"chunk {number}: tool call {index} has no function name"
            arguments = function.get("arguments")
            if not isinstance(arguments, dict):
                return (
                    f"chunk {number}: the arguments of tool call {index} ({name[:100]!r}) are "
                    f"{_kind(arguments)}, not a JSON object"
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


def _kind(value) -> str:
    """How a JSON value that should have been an object looks, in a few words."""
    if value is None:
        return "missing or null"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"
