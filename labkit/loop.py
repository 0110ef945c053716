"""The agent loop: send the conversation, assemble the reply, dispatch tools, decide when to stop.

``agent_events`` is a generator of plain-dict events, so a lesson can watch a run
step by step, a recorder can save it and a test can check it. Every event has a
``type`` and a monotonic ``time``. The loop never runs a tool from a turn that did
not finish cleanly, and it always ends with exactly one ``stopped`` event.

Nothing the loop hands out can change what it does next. Each message is frozen
(``labkit.frozen``) when it joins the conversation, and so are the tool schemas at
the start: ``chat`` and the events get a fresh list of those read-only messages, so
a request costs the loop a list of pointers, not a copy of the conversation.
"""

from __future__ import annotations

import json
from time import monotonic

from .frozen import freeze
from .prompt import SYSTEM_PROMPT
from .turns import TurnAssembler

#: Why a run stopped. Every run ends with one ``stopped`` event carrying one of these.
STOP_REASONS = {
    "assistant_finished": "the model sent a final message with text and no tool calls",
    "empty_response": "the model's complete reply had no text and no tool calls",
    "incomplete_model_turn": "the stream ended without 'done', or was cut by the output-length "
    "limit (done_reason 'length'); no tool from it was run",
    "malformed_model_turn": "a chunk of the reply was not valid Ollama chat data; no tool from "
    "it was run",
    "model_error": "calling the model raised an error (its text is in 'error')",
    "max_turns": "the budget of model requests was spent; the last turn's tools ran, "
    "but no further request was made",
}

#: Errors a tool may raise to tell the model it asked for something wrong.
TOOL_ERRORS = (ValueError, TypeError, OSError)


def agent_events(chat, tools, task, *, max_turns=8):
    """Run one attempt at ``task`` and yield its events.

    ``chat(messages, tool_schemas)`` returns an iterator of Ollama chat chunks.
    ``tools`` has ``schemas`` and ``invoke(name, arguments)``. ``max_turns`` bounds
    the number of model requests.
    """
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
    return _run(chat, tools, task, max_turns)


def tool_message(name: str, result) -> dict:
    """The message that carries a tool's result back to the model (Ollama's shape)."""
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}


def call_tool(tools, name, arguments):
    """Invoke one tool; a refusal becomes an ``{"error": ...}`` result the model can read."""
    try:
        return tools.invoke(name, arguments)
    except TOOL_ERRORS as exc:
        return {"error": str(exc)}


def _close(stream) -> None:
    """Release a stream the loop is done with. Failing to close it changes nothing the
    loop has already judged, so the failure must not escape the loop."""
    try:
        getattr(stream, "close", lambda: None)()
    except Exception:
        pass


def _event(kind: str, **fields) -> dict:
    return {"type": kind, "time": monotonic(), **fields}


def _run(chat, tools, task, max_turns):
    messages = [freeze({"role": "system", "content": SYSTEM_PROMPT}),
                freeze({"role": "user", "content": task})]
    schemas = freeze(tools.schemas)  # a chat that edits them changes no later run
    names = [schema["function"]["name"] for schema in schemas]
    calls_run = 0

    def stopped(reason, turns, detail, **extra):
        return _event("stopped", reason=reason, turns=turns, tool_calls=calls_run,
                      detail=detail, messages=list(messages), **extra)

    for turn_number in range(1, max_turns + 1):
        yield _event("model_start", turn=turn_number, tools=list(names),
                     messages=list(messages))
        assembler = TurnAssembler()
        stream = None
        try:
            stream = chat(list(messages), schemas)
            for chunk in stream:
                text = assembler.add(chunk)
                if assembler.problem:
                    break
                if text:  # a dict literal: this line runs once per streamed fragment
                    yield {"type": "text_delta", "time": monotonic(), "turn": turn_number,
                           "text": text}
        except Exception as exc:  # the model side failed: report it, never crash the caller
            error = str(exc) or type(exc).__name__
            what = getattr(exc, "stop_detail", None) or "the model call failed"  # e.g. a replay mismatch
            yield stopped("model_error", turn_number, f"{what}: {error}", error=error)
            return
        finally:
            _close(stream)

        turn = assembler.turn()
        if turn.problem:
            yield stopped("malformed_model_turn", turn_number, turn.problem)
            return
        if not turn.may_dispatch:
            detail = ("the stream ended without a 'done' chunk" if not turn.done
                      else "the reply was cut by the output-length limit (done_reason 'length')")
            yield stopped("incomplete_model_turn", turn_number, detail)
            return

        messages.append(turn.message)  # read-only already
        if not turn.tool_calls:
            if turn.message["content"].strip():
                yield stopped("assistant_finished", turn_number, "the model gave its final answer")
            else:
                yield stopped("empty_response", turn_number, "the reply had no text and no tool calls")
            return

        for call in turn.tool_calls:
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            yield _event("tool_start", turn=turn_number, name=name, arguments=arguments)
            result = call_tool(tools, name, arguments)
            calls_run += 1
            messages.append(freeze(tool_message(name, result)))
            yield _event("tool_result", turn=turn_number, name=name, result=result)

    yield stopped("max_turns", max_turns, f"the budget of {max_turns} model requests is spent")
