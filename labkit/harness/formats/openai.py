"""OpenAI's Chat Completions stream: tool calls in fragments, keyed by ``index``, complete at
``finish_reason``.

A streamed reply is a series of ``chat.completion.chunk`` objects, one per server-sent
event. Each holds ``choices[0].delta``: a piece of text (``content``) or pieces of tool
calls (``tool_calls``, a list of entries, each naming the ``index`` of the call it belongs
to). The first entry of a call brings its ``id`` and ``function.name``; the later ones bring
``function.arguments``, fragments of one JSON text cut anywhere (inside a key, a string,
a number). Entries of different calls may interleave, and one chunk may hold several.

The reply is complete when the choice's ``finish_reason`` arrives: ``"tool_calls"`` and
``"stop"`` are clean ends; ``"length"`` means the output-length limit cut the reply, and it
is refused as Ollama's ``done_reason: "length"`` is. Only then are each call's fragments
joined and parsed: before it, the JSON text is a prefix, and a prefix of JSON is not JSON.
Joined arguments that are not a JSON object make the turn malformed.

A chunk with an empty ``choices`` list (the usage chunk some servers send after the end)
carries nothing for the turn. A whole, non-streamed completion (``"object":
"chat.completion"``, ``choices[0].message`` instead of ``delta``, calls without ``index``) is
read as one chunk holding the whole turn, under the same rules; a legacy ``function_call``
beside ``tool_calls`` is never read. Results go back as one ``tool`` message per call,
naming the call's id. Linear in the stream's length: fragments are kept in lists and joined
once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..contracts import Chunk, Message, ToolCall, Turn
from ..frozen import freeze
from .assembly import ChunkAssembler, Malformed, kind, need, parse_arguments
from .messages import ToolMessages

CLEAN_ENDS = ("tool_calls", "stop")
#: The names OpenAI takes for a function (its API reference: "a-z, A-Z, 0-9, or contain
#: underscores and dashes, with a maximum length of 64").
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@dataclass
class CallSoFar:
    """One tool call as its fragments arrive: ``parts`` are pieces of its arguments' JSON text."""

    id: str
    name: str
    parts: list = field(default_factory=list)


class OpenAIAssembler(ChunkAssembler):
    """Folds chat completion chunks one at a time (``add``); ``turn()`` judges what arrived
    so far."""

    def __init__(self) -> None:
        super().__init__()
        self.content: list[str] = []  # the text's fragments
        self.calls: dict[int, CallSoFar] = {}  # index -> CallSoFar
        self.finish_reason: str | None = None

    def add(self, chunk: Chunk) -> str:
        """Fold one chunk in; return the text it carried ('' if none)."""
        self.chunks += 1
        if self.problem is not None:
            return ""
        # Most chunks carry one choice with a fragment of text and nothing else: they take
        # this short way, which applies the same rules as _fold to exactly that shape.
        choices = chunk.get("choices") if type(chunk) is dict else None
        if type(choices) is list and len(choices) == 1 and self.finish_reason is None:
            choice = choices[0]
            delta = choice.get("delta") if type(choice) is dict else None
            if (
                type(delta) is dict
                and "error" not in chunk
                and choice.get("index", 0) == 0
                and choice.get("finish_reason") is None
                and delta.get("tool_calls") is None
            ):
                text = delta.get("content")
                if text is None or type(text) is str:
                    if text:
                        self.content.append(text)
                    return text or ""
        return self._checked_add(chunk)

    def _fold(self, chunk: Chunk) -> str:
        need(isinstance(chunk, dict), f"{kind(chunk)}, not a JSON object")
        need("error" not in chunk, f"an error from the server: {chunk.get('error')}")
        choices = chunk.get("choices")
        need(isinstance(choices, list), "no 'choices' list")
        return "".join([self._fold_choice(choice) for choice in choices])

    def _fold_choice(self, choice: object) -> str:
        need(isinstance(choice, dict), "a choice is not an object")
        need(
            choice.get("index", 0) == 0,
            f"choice {choice.get('index')!r}: the harness asks for one choice, numbered 0",
        )
        need(
            self.finish_reason is None,
            f"it arrived after the reply's finish_reason ({self.finish_reason!r})",
        )
        whole = "delta" not in choice and "message" in choice  # a non-streamed completion
        delta = choice.get("message" if whole else "delta")
        need(isinstance(delta, dict), "choices[0] has no 'delta' object")
        text = delta.get("content")
        need(text is None or isinstance(text, str), f"delta.content is {kind(text)}, not text")
        entries = delta.get("tool_calls")
        need(
            entries is None or isinstance(entries, list),
            f"delta.tool_calls is {kind(entries)}, not a list",
        )
        for position, entry in enumerate(entries or []):
            self._fold_call(entry, position if whole else None)
        reason = choice.get("finish_reason")
        need(reason is None or isinstance(reason, str), f"finish_reason is {kind(reason)}")
        if text:
            self.content.append(text)
        self.finish_reason = reason
        return text or ""

    def _fold_call(self, entry: object, position: int | None) -> None:
        """One entry of ``delta.tool_calls``: it starts a call, or adds to the one at its index.
        (A whole completion's calls have no index: their position is their index.)"""
        need(isinstance(entry, dict), "a tool_calls entry is not an object")
        index = entry.get("index", position)
        need(
            type(index) is int and index >= 0,
            "a tool_calls entry has no 'index', which says which call it belongs to",
        )
        function = entry.get("function") or {}
        need(isinstance(function, dict), f"tool call {index}: 'function' is {kind(function)}")
        call_id, name, part = entry.get("id"), function.get("name"), function.get("arguments")
        call = self.calls.get(index)
        if call is None:
            need(isinstance(call_id, str) and call_id, f"tool call {index} starts without an 'id'")
            need(
                isinstance(name, str) and name, f"tool call {index} starts without a function name"
            )
            need(
                all(other.id != call_id for other in self.calls.values()),
                f"tool call {index} has the id {call_id[:100]!r} of an earlier call: "
                "their results could not be told apart",
            )
            call = self.calls[index] = CallSoFar(call_id, name)
        else:  # later entries may repeat the id and name, never change them
            need(
                call_id in (None, "", call.id) and name in (None, "", call.name),
                f"tool call {index} changes its id or name part-way",
            )
        need(
            part is None or isinstance(part, str),
            f"the arguments of tool call {index} are {kind(part)}, not JSON text",
        )
        if part:
            call.parts.append(part)

    def calls_so_far(self) -> list[tuple[str, str, str]]:
        """``(id, name, arguments' JSON text so far)`` of each call, in index order."""
        return [(call.id, call.name, "".join(call.parts)) for _, call in sorted(self.calls.items())]

    def unfinished(self) -> str | None:
        """Why the reply has not finished cleanly (so far), or None when it has."""
        reason = self.finish_reason
        if reason is None:
            return "the stream ended before the choice's finish_reason arrived"
        if reason == "length":
            return "the reply was cut by the output-length limit (finish_reason 'length')"
        if reason not in CLEAN_ENDS:
            return f"the reply ended with finish_reason {reason!r}, not 'tool_calls' or 'stop'"
        return None

    def turn(self) -> Turn:
        text = "".join(self.content)
        calls = self.calls_so_far()
        problem, unfinished, parsed = self.problem, self.unfinished(), []
        if problem is None and unfinished is None:  # complete: now the arguments are JSON
            try:
                parsed = [
                    ToolCall(
                        call_id, name, parse_arguments(arguments, f"tool call {index} ({name!r})")
                    )
                    for index, (call_id, name, arguments) in zip(sorted(self.calls), calls)
                ]
            except Malformed as exc:
                problem = f"at the end of the reply: {exc}"
                parsed = []
        # content "" rather than null beside tool calls: the format allows null, but some
        # OpenAI-compatible servers (llama-cpp-python's) refuse an assistant message with it
        message = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for call_id, name, arguments in calls
            ]
        return Turn(
            freeze(message),
            text,
            parsed,
            self.finish_reason is not None,
            self.finish_reason,
            problem,
            unfinished,
            self.chunks,
        )


class OpenAI(ToolMessages):
    """OpenAI Chat Completions (and every server that speaks it): server-sent events, tool
    calls in fragments by ``index``, ``finish_reason`` on the last choice delta; each result
    goes back as its own ``tool`` message naming the call's ``tool_call_id``."""

    name = "openai"

    def assembler(self) -> OpenAIAssembler:
        return OpenAIAssembler()

    def tool_results(self, calls: list[ToolCall], results: list) -> list[Message]:
        return [
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            for call, result in zip(calls, results)
        ]

    def tool_schema(self, name: str, description: str, parameters: dict) -> dict:
        """``{"type": "function", "function": {...}}``, as Ollama's, with OpenAI's rule
        for names."""
        problem = self.tool_name_problem(name)
        if problem:
            raise ValueError(problem)
        function = {"name": name, "description": description, "parameters": parameters}
        return {"type": "function", "function": function}

    def tool_name_problem(self, name: str) -> str | None:
        if isinstance(name, str) and TOOL_NAME.fullmatch(name):
            return None
        return f"{name!r:.80} is not a valid OpenAI tool name (1 to 64 of a-z A-Z 0-9 _ -)"


FORMAT = OpenAI()
