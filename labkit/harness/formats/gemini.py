"""Gemini's ``streamGenerateContent`` stream: each event a whole response holding the new parts;
complete at the candidate's ``finishReason``.

A streamed reply (``?alt=sse``) is a series of server-sent events, each a full
``GenerateContentResponse``: ``candidates[0].content.parts`` holds the parts that are new
since the event before. A part is a piece of text (``{"text": ...}``; with ``"thought":
true``, a summary of the model's thinking, which is not the reply's text) or a whole
function call, ``{"functionCall": {"name", "args": {...}, "id"?}}``: its arguments arrive as
a JSON object, never in fragments. A part may carry a ``thoughtSignature``: an opaque
token of the model's reasoning that **must go back unchanged**, on the same part, in the next
request (the API refuses a turn whose function call lost its signature).

The reply is complete when the candidate's ``finishReason`` arrives: ``"STOP"`` is the one
clean end (a reply that calls functions ends with it too); ``"MAX_TOKENS"`` means the
output-length limit cut the reply, and it is refused as Ollama's ``done_reason: "length"``
is; every other reason (``SAFETY``, ``MALFORMED_FUNCTION_CALL``...) is refused too. An
event ``{"error": {...}}`` is the server failing mid-stream.

The assistant message is a ``model`` content: the parts in order, a run of text pieces
joined into one part (a signature ends a run, staying on its part), each call whole with
its signature. The results of one turn go back together, as one ``user`` content whose parts
are ``functionResponse`` parts, each naming its call (``name``, and ``id`` when the call had
one) and holding the result as a JSON object under ``output`` (Gemini reads a response's
``output`` and ``error`` keys; the result's own keys would be misread). The loop's system
prompt and task stay in the loop's shape; ``GeminiModel`` turns them into
``systemInstruction`` and a text part when it sends the request. Linear in the stream's
length: text pieces are kept in lists and joined once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..contracts import CallRef, Chunk, Message, ResultRef, ToolCall, Turn
from ..frozen import freeze
from .assembly import ChunkAssembler, Malformed, frozen_arguments, kind, need
from .messages import text_length

CLEAN_END = "STOP"
#: The names Gemini takes for a function: "must start with a letter or an underscore; a-z,
#: A-Z, 0-9, underscores, dots, colons and dashes, with a maximum length of 64".
TOOL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")


@dataclass
class PartSoFar:
    """One part of the reply: ``kind`` "text", "thought", "call" or "other"; a text run's
    pieces, a call's name, arguments and id, another part whole; its signature, if any."""

    kind: str
    pieces: list = field(default_factory=list)
    call: dict | None = None
    signature: str | None = None


class GeminiAssembler(ChunkAssembler):
    """Folds streamed ``GenerateContentResponse`` events one at a time (``add``); ``turn()``
    judges what arrived so far."""

    unit = "event"

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[PartSoFar] = []
        self.ids: set[str] = set()  # the calls' ids, where the model gave them
        self.finish_reason: str | None = None
        self.blocked: str | None = None  # promptFeedback.blockReason

    def add(self, event: Chunk) -> str:
        """Fold one event in; return the text it carried ('' if none)."""
        self.chunks += 1
        if self.problem is not None:
            return ""
        # Most events carry one piece of text and nothing else: they take this short way,
        # which applies the same rules as _fold to exactly that shape.
        candidates = event.get("candidates") if type(event) is dict else None
        if type(candidates) is list and len(candidates) == 1 and self.finish_reason is None:
            candidate = candidates[0]
            content = candidate.get("content") if type(candidate) is dict else None
            parts = content.get("parts") if type(content) is dict else None
            if (
                type(parts) is list
                and len(parts) == 1
                and type(parts[0]) is dict
                and len(parts[0]) == 1
                and type(parts[0].get("text")) is str
                and "error" not in event
                and candidate.get("finishReason") is None
                and candidate.get("index", 0) == 0
                and content.get("role", "model") == "model"
            ):
                return self._text(parts[0]["text"], "text", None)
        return self._checked_add(event)

    def _fold(self, event: Chunk) -> str:
        need(isinstance(event, dict), f"{kind(event)}, not a JSON object")
        if "error" in event:
            error = event["error"]
            said = error.get("message") if isinstance(error, dict) else error
            raise Malformed(f"an error from the server: {said}")
        feedback = event.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self.blocked = feedback["blockReason"]
        candidates = event.get("candidates")
        if candidates is None:
            return ""  # usage, or feedback about the prompt
        need(isinstance(candidates, list), f"'candidates' is {kind(candidates)}, not a list")
        need(
            len(candidates) <= 1,
            f"{len(candidates)} candidates: the harness asks for one",
        )
        return "".join([self._candidate(candidate) for candidate in candidates])

    def _candidate(self, candidate: object) -> str:
        need(isinstance(candidate, dict), f"a candidate is {kind(candidate)}, not an object")
        need(candidate.get("index", 0) == 0, "the harness asks for one candidate, numbered 0")
        content = candidate.get("content")
        need(content is None or isinstance(content, dict), f"'content' is {kind(content)}")
        parts = (content or {}).get("parts") or []
        need(isinstance(parts, list), f"content.parts is {kind(parts)}, not a list")
        need(
            (content or {}).get("role", "model") == "model",
            f"content.role is {(content or {}).get('role')!r}, not 'model'",
        )
        need(
            not parts or self.finish_reason is None,
            f"parts arrived after the finishReason ({self.finish_reason!r})",
        )
        text = "".join([self._part(part) for part in parts])
        reason = candidate.get("finishReason")
        need(reason is None or isinstance(reason, str), f"finishReason is {kind(reason)}")
        if reason:
            self.finish_reason = reason
        return text

    def _part(self, part: object) -> str:
        need(isinstance(part, dict), f"a part is {kind(part)}, not an object")
        signature = part.get("thoughtSignature")
        need(
            signature is None or isinstance(signature, str),
            f"a thoughtSignature is {kind(signature)}, not text",
        )
        if "functionCall" in part:
            need("text" not in part, "a part holds both text and a functionCall")
            self._call(part["functionCall"], signature)
            return ""
        if "text" in part:
            text, thought = part["text"], part.get("thought", False)
            need(isinstance(text, str), f"a part's text is {kind(text)}, not text")
            need(type(thought) is bool, f"a part's 'thought' is {kind(thought)}, not true or false")
            return self._text(text, "thought" if thought else "text", signature)
        self.parts.append(PartSoFar("other", call=frozen_arguments(part, "a part is")))  # whole
        return ""

    def _text(self, text: str, kind_: str, signature: str | None) -> str:
        """A piece of text: it joins the run before it, unless a signature closed that run."""
        last = self.parts[-1] if self.parts else None
        if last is None or last.kind != kind_ or last.signature is not None:
            last = PartSoFar(kind_)
            self.parts.append(last)
        if text:
            last.pieces.append(text)
        last.signature = signature
        return text if kind_ == "text" else ""

    def _call(self, call: object, signature: str | None) -> None:
        need(isinstance(call, dict), f"a functionCall is {kind(call)}, not an object")
        name, args, call_id = call.get("name"), call.get("args", {}), call.get("id")
        number = sum(1 for part in self.parts if part.kind == "call")
        need(isinstance(name, str) and name, f"functionCall {number} has no 'name'")
        need(isinstance(args, dict), f"the args of functionCall {number} ({name[:100]!r}) are "
             f"{kind(args)}, not a JSON object")  # fmt: skip
        need(call_id is None or isinstance(call_id, str), f"functionCall {number}: its id")
        need(
            call_id is None or call_id not in self.ids,
            f"functionCall {number} has the id {str(call_id)[:100]!r} of an earlier call: "
            "their results could not be told apart",
        )
        if call_id is not None:
            self.ids.add(call_id)
        arguments = frozen_arguments(args, f"the args of functionCall {number} are")
        kept = {"name": name, "args": arguments, **({"id": call_id} if call_id else {})}
        self.parts.append(PartSoFar("call", call=kept, signature=signature))

    def unfinished(self) -> str | None:
        """Why the reply has not finished cleanly (so far), or None when it has."""
        if self.blocked is not None:
            return f"the prompt was blocked (promptFeedback.blockReason {self.blocked!r})"
        if self.finish_reason is None:
            return "the stream ended before the candidate's finishReason arrived"
        if self.finish_reason == "MAX_TOKENS":
            return "the reply was cut by the output-length limit (finishReason 'MAX_TOKENS')"
        if self.finish_reason != CLEAN_END:
            return f"the reply ended with finishReason {self.finish_reason!r}, not 'STOP'"
        return None

    def kept_parts(self) -> list[dict]:
        """The reply's parts as they go back: text runs joined, signatures where they came."""
        kept = []
        for part in self.parts:
            signed = {"thoughtSignature": part.signature} if part.signature else {}
            if part.kind == "call":
                kept.append({"functionCall": part.call, **signed})
            elif part.kind == "other":
                kept.append(part.call)
            elif part.pieces or signed:
                thought = {"thought": True} if part.kind == "thought" else {}
                kept.append({"text": "".join(part.pieces), **thought, **signed})
        return kept

    def turn(self) -> Turn:
        problem, unfinished = self.problem, self.unfinished()
        calls = []
        if problem is None and unfinished is None:
            calls = [
                ToolCall(part.call.get("id"), part.call["name"], part.call["args"])
                for part in self.parts
                if part.kind == "call"
            ]
        return Turn(
            freeze({"role": "model", "parts": self.kept_parts()}),
            "".join("".join(part.pieces) for part in self.parts if part.kind == "text"),
            calls,
            self.finish_reason is not None or self.blocked is not None,
            self.finish_reason,
            problem,
            unfinished,
            self.chunks,
        )


def function_response(call: ToolCall, result: object) -> dict:
    """The part that carries one call's result back (Gemini's shape)."""
    named = {"id": call.id} if call.id else {}
    return {"functionResponse": {**named, "name": call.name, "response": {"output": result}}}


class Gemini:
    """Gemini's ``streamGenerateContent``: each event a whole response with the new parts,
    calls whole, ``finishReason`` at the end, thought signatures kept; a turn's results go
    back together, as ``functionResponse`` parts in one ``user`` content."""

    name = "gemini"
    reply_role = "model"

    def assembler(self) -> GeminiAssembler:
        return GeminiAssembler()

    def tool_results(self, calls: list[ToolCall], results: list) -> list[Message]:
        if not calls:
            return []
        return [
            {
                "role": "user",
                "parts": [function_response(call, result) for call, result in zip(calls, results)],
            }
        ]

    def tool_schema(self, name: str, description: str, parameters: dict) -> dict:
        """A ``functionDeclaration``: the JSON Schema as it is, under ``parametersJsonSchema``
        (``parameters`` would take only Gemini's OpenAPI subset)."""
        problem = self.tool_name_problem(name)
        if problem:
            raise ValueError(problem)
        return {"name": name, "description": description, "parametersJsonSchema": parameters}

    def tool_name_problem(self, name: str) -> str | None:
        if isinstance(name, str) and TOOL_NAME.fullmatch(name):
            return None
        return (
            f"{name!r:.80} is not a valid Gemini function name (a letter or _ first, then up to "
            "63 of a-z A-Z 0-9 _ . : -)"
        )

    # The loop's messages in this format: the system prompt and the task with a text
    # ``content`` (``GeminiModel`` makes them ``systemInstruction`` and a text part); each
    # turn a ``model`` content of parts (text, thought summaries, calls, their signatures);
    # each turn's results one ``user`` content of ``functionResponse`` parts.

    def sizes(self, message: Message) -> dict[str, int]:
        role, parts = message.get("role"), message.get("parts")
        role = "assistant" if role == self.reply_role else role  # the model's text, as others'
        if not isinstance(parts, list):
            return {role: text_length(message.get("content"))}
        sizes = {role: 0, "thinking": 0, "tool_calls": 0, "tool": 0}
        for part in parts:
            if not isinstance(part, dict):
                sizes[role] += len(json.dumps(part, default=str))
                continue
            sizes["thinking"] += len(str(part.get("thoughtSignature") or ""))
            if "functionCall" in part:
                sizes["tool_calls"] += len(json.dumps(part["functionCall"], default=str))
            elif "functionResponse" in part:
                sizes["tool"] += len(result_text(part["functionResponse"]))
            elif part.get("thought") is True:
                sizes["thinking"] += len(str(part.get("text") or ""))
            else:
                sizes[role] += text_length(
                    [{k: v for k, v in part.items() if k != "thoughtSignature"}]
                )
        return sizes

    def calls_in(self, message: Message) -> list[CallRef]:
        if message.get("role") != self.reply_role:
            return []
        return [
            CallRef(call.get("id"), call.get("name"))
            for call in (_inside(part, "functionCall") for part in message.get("parts") or ())
            if call is not None
        ]

    def results_in(self, message: Message) -> list[ResultRef]:
        if message.get("role") != "user":
            return []
        return [
            ResultRef(answer.get("id"), answer.get("name"), result_text(answer))
            for answer in (_inside(part, "functionResponse") for part in message.get("parts") or ())
            if answer is not None
        ]

    def with_results(self, message: Message, contents: list[str]) -> Message:
        """The results' text put back as Gemini reads a result: an object under ``output``
        (text that is a JSON object, a compaction's note, goes back as that object)."""
        given, parts = iter(contents), []
        for part in message.get("parts") or ():
            answer = _inside(part, "functionResponse")
            text = next(given, None) if answer is not None else None
            if text is not None:
                try:
                    value = json.loads(text)
                except ValueError:
                    value = text
                part = {**part, "functionResponse": {**answer, "response": {"output": value}}}
            parts.append(part)
        return {**message, "parts": parts}


def result_text(answer: dict) -> str:
    """A functionResponse's result as the text a model reads: its ``output`` (or the whole
    response, when it has none) as JSON, as the other formats carry a result."""
    response = answer.get("response")
    shown = response.get("output", response) if isinstance(response, dict) else response
    return shown if isinstance(shown, str) else json.dumps(shown, default=str)


def _inside(part: object, key: str) -> dict | None:
    """The call or the response a part holds under ``key``, or None."""
    inner = part.get(key) if isinstance(part, dict) else None
    return inner if isinstance(inner, dict) else None


FORMAT = Gemini()
