"""The agent loop: send the conversation, assemble the reply, dispatch tools, decide when to stop.

``agent_events`` is a generator of plain-dict events (``contracts.py`` describes each
kind), so a lesson can watch a run step by step, a recorder can save it and a test can
check it. The loop never runs a tool from a turn that did not finish cleanly, and it
always ends with exactly one ``stopped`` event.

Three small pieces plug into it (each a Protocol in ``contracts.py``): the wire format a
model speaks (``formats/``: how a reply streams in and how results go back; Ollama's
unless the chat says otherwise), and, optionally, a permission ``gate`` between an
assembled call and its dispatch (``gate.py``) and a ``budget`` that may shorten the
conversation before each request (``budget.py``). The loop stays the same for all of them.

Only the model side may fail quietly: whatever ``chat`` raises, when called or while
its reply streams, ends the run as ``model_error``. An error in the loop's own work
(assembling the turn, keeping the conversation) is a bug, and it propagates.

Nothing the loop hands out can change what it does next. Each message is frozen
(``frozen.py``) when it joins the conversation, and so are the tool schemas at the
start: ``chat`` and the events get a fresh list of those read-only messages, so a
request costs the loop a list of pointers, not a copy of the conversation.
"""

from __future__ import annotations

from collections.abc import Iterator
from time import monotonic

from .contracts import (
    Budget,
    Chat,
    Event,
    Gate,
    Message,
    ModelStart,
    Permission,
    Stopped,
    ToolResult,
    Tools,
    ToolStart,
    WireFormat,
    tool_names,
)
from .formats import format_of, named
from .frozen import freeze
from .prompt import SYSTEM_PROMPT
from .words import counted

MAX_TURNS = 8  # the default budget of model requests for one attempt
#: Errors a tool may raise to tell the model it asked for something wrong.
TOOL_ERRORS = (ValueError, TypeError, OSError)


def agent_events(
    chat: Chat,
    tools: Tools,
    task: str,
    *,
    max_turns: int = MAX_TURNS,
    gate: Gate | None = None,
    budget: Budget | None = None,
) -> Iterator[Event]:
    """Run one attempt at ``task`` and yield its events.

    ``chat(messages, tool_schemas)`` returns an iterator of the model's streamed chunks,
    in the wire format ``chat.wire_format`` names (Ollama's when it names none).
    ``tools`` has ``schemas`` and ``invoke(name, arguments)``. ``max_turns`` bounds the
    number of model requests. ``gate.review(name, arguments)``, if given, decides whether
    each call runs; ``budget(messages)``, if given, returns the conversation to keep and
    send before each request; a budget that names a ``wire_format`` must name the chat's.
    """
    wire = format_of(chat)
    measured_in = getattr(budget, "wire_format", None)
    if measured_in is not None and named(measured_in).name != wire.name:
        raise ValueError(
            f"the budget measures {named(measured_in).name} messages, but the chat speaks "
            f"{wire.name}: give it wire_format={wire.name!r}"
        )
    return _run(chat, wire, tools, task, positive_int(max_turns, "max_turns"), gate, budget)


def positive_int(value: object, name: str) -> int:
    """``value`` if it is an int of at least 1 (``True`` is not), else a ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def call_tool(tools: Tools, name: str, arguments: dict) -> dict:
    """Invoke one tool; a refusal becomes an ``{"error": ...}`` result the model can read."""
    try:
        return tools.invoke(name, arguments)
    except TOOL_ERRORS as exc:
        return {"error": str(exc)}


def _run(
    chat: Chat,
    wire: WireFormat,
    tools: Tools,
    task: str,
    max_turns: int,
    gate: Gate | None,
    budget: Budget | None,
) -> Iterator[Event]:
    messages: list[Message] = [
        freeze({"role": "system", "content": SYSTEM_PROMPT}),
        freeze({"role": "user", "content": task}),
    ]
    schemas = freeze(tools.schemas)  # a chat that edits them changes no later run
    names = tool_names(schemas)
    calls_run = 0

    def stopped(reason: str, turns: int, detail: str, **extra: str) -> Stopped:
        return Stopped(
            type="stopped",
            time=monotonic(),
            reason=reason,
            turns=turns,
            tool_calls=calls_run,
            detail=detail,
            messages=list(messages),
            **extra,
        )

    for turn_number in range(1, max_turns + 1):
        if budget is not None:
            messages = [freeze(message) for message in budget(list(messages))]
        yield ModelStart(
            type="model_start",
            time=monotonic(),
            turn=turn_number,
            tools=list(names),
            messages=list(messages),
        )
        # Read the reply. Only what the model side raises (calling chat, or reading its next
        # chunk) ends the run as model_error; an error in the assembler is a bug and propagates.
        assembler, stream = wire.assembler(), None
        add = assembler.add
        try:
            try:
                stream = chat(list(messages), schemas)
                chunks = iter(stream)
            except Exception as exc:
                yield _model_error(stopped, turn_number, exc)
                return
            while True:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    break
                except Exception as exc:
                    yield _model_error(stopped, turn_number, exc)
                    return
                text = add(chunk)
                if text:  # a TextDelta, written as a literal: this runs once per fragment
                    yield {"type": "text_delta", "time": monotonic(), "turn": turn_number,
                           "text": text}  # fmt: skip
                elif assembler.problem:
                    break
        finally:
            _close(stream)

        turn = assembler.turn()
        if turn.problem:
            yield stopped("malformed_model_turn", turn_number, turn.problem)
            return
        if turn.unfinished:
            yield stopped("incomplete_model_turn", turn_number, turn.unfinished)
            return

        messages.append(turn.message)  # read-only already
        if not turn.calls:
            if turn.text.strip():
                yield stopped("assistant_finished", turn_number, "the model gave its final answer")
            else:
                yield stopped(
                    "empty_response", turn_number, "the reply had no text and no tool calls"
                )
            return

        results = []
        for call in turn.calls:
            yield ToolStart(
                type="tool_start",
                time=monotonic(),
                turn=turn_number,
                name=call.name,
                arguments=call.arguments,
            )
            decision = gate.review(call.name, call.arguments) if gate is not None else None
            if decision is not None:
                yield Permission(
                    type="permission",
                    time=monotonic(),
                    turn=turn_number,
                    name=call.name,
                    **decision.event_fields(),
                )
            if decision is None or decision.allowed:
                result = call_tool(tools, call.name, call.arguments)
                calls_run += 1
            else:
                result = decision.tool_result()
            results.append(result)
            yield ToolResult(
                type="tool_result",
                time=monotonic(),
                turn=turn_number,
                name=call.name,
                result=result,
            )
        messages.extend(freeze(message) for message in wire.tool_results(turn.calls, results))

    budget = counted(max_turns, "model request")
    yield stopped("max_turns", max_turns, f"the budget of {budget} is spent")


def _model_error(stopped, turn_number: int, exc: BaseException) -> Stopped:
    """The stop for a failure of the model side; a ``stop_detail`` on the error names its kind."""
    error = str(exc) or type(exc).__name__
    what = getattr(exc, "stop_detail", None) or "the model call failed"  # e.g. a replay mismatch
    return stopped("model_error", turn_number, f"{what}: {error}", error=error)


def _close(stream: object) -> None:
    """Release a stream the loop is done with. Failing to close it changes nothing the
    loop has already judged, so the failure must not escape the loop."""
    try:
        getattr(stream, "close", lambda: None)()
    except Exception:
        pass
