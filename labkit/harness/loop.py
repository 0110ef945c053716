"""The agent loop: send the conversation, assemble the reply, dispatch tools, decide when to stop.

``agent_events`` is a generator of plain-dict events (``contracts.py`` describes each
kind), so a lesson can watch a run step by step, a recorder can save it and a test can
check it. The loop never runs a tool from a turn that did not finish cleanly, and it
always ends with exactly one ``stopped`` event.

Small pieces plug into it (each a Protocol in ``contracts.py``): the wire format a
model speaks (``formats/``: how a reply streams in and how results go back; Ollama's
unless the chat says otherwise), and, optionally, a permission ``gate`` between an
assembled call and its dispatch (``gate.py``), a ``budget`` that may shorten the
conversation before each request (``budget.py``), and ``hooks`` run at five points
(``hooks.py``): at the run's start, before each request, before and after each call, and
at the stop. The loop stays the same for all of them: a point asks the hooks, records
what each decided as a ``hook`` event, and applies the decisions (each already checked
against what its point allows: ``contracts.HookDecision``).

One call goes through two steps. ``_judged``: the ``before_tool`` hooks (which may deny
it or replace its arguments), then the gate (on the arguments that will run). Then the
tool runs, and ``_finished``: the ``after_tool`` hooks (which may add to or replace its
result). A turn's calls run one at a time; given a ``runner`` (lesson 10, ``parallel.py``)
and tools that say which calls only read, each run of consecutive read-only calls is
judged call by call, run at once, and finished call by call, in the order asked
(``contracts.py`` sets out the events' order). A tool may return a ``ChildRun`` (a
subagent, ``subagents.py``): its run becomes one ``subagent`` event, and only its result
goes back. A stop the model chose goes to the ``stop`` hooks first; one of them may send
the model back to work, once per run, with its reason as a user message: the extra
requests come out of the same ``max_turns``.

The system message is ``system``: a text (``SYSTEM_PROMPT`` unless given), or named parts
assembled in a fixed order (``system_prompt.py``, lesson 10).

Only the model side may fail quietly: whatever ``chat`` raises, when called or while
its reply streams, ends the run as ``model_error``; and tools that can run nothing more
(``ToolsFailed``: their server exited) end it as ``tools_failed``. An error in the loop's
own work (assembling the turn, keeping the conversation) is a bug, and it propagates.

Nothing the loop hands out can change what it does next. Each message is frozen
(``frozen.py``) when it joins the conversation, and so are the tool schemas at the
start: ``chat`` and the events get a fresh list of those read-only messages, so a
request costs the loop a list of pointers, not a copy of the conversation.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from time import monotonic

from .contracts import (
    Budget,
    CallRunner,
    Chat,
    ChildRun,
    Event,
    Gate,
    HookDecision,
    HookPoint,
    Hooks,
    Message,
    ModelStart,
    Outcome,
    Permission,
    Start,
    Stopped,
    SubagentRan,
    SystemPrompt,
    ToolCall,
    ToolResult,
    Tools,
    ToolsFailed,
    ToolStart,
    WireFormat,
    tool_names,
)
from .formats import format_of, named
from .frozen import freeze
from .parallel import batches, late_result
from .prompt import SYSTEM_PROMPT
from .system_prompt import prompt_text
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
    hooks: Hooks | None = None,
    system: SystemPrompt = SYSTEM_PROMPT,
    runner: CallRunner | None = None,
    start: Start | None = None,
) -> Iterator[Event]:
    """Run one attempt at ``task`` and yield its events.

    ``chat(messages, tool_schemas)`` returns an iterator of the model's streamed chunks,
    in the wire format ``chat.wire_format`` names (Ollama's when it names none).
    ``tools`` has ``schemas`` and ``invoke(name, arguments)``. ``max_turns`` bounds the
    number of model requests. ``gate.review(name, arguments)``, if given, decides whether
    each call runs; ``budget(messages)``, if given, returns the conversation to keep and
    send before each request; a budget that names a ``wire_format`` must name the chat's;
    ``hooks.run(point, event)``, if given, runs the hooks at each of the five points.
    ``system`` is the system message: a text, or ``PromptPart``s to assemble.
    ``runner.run(jobs)``, if given, runs each batch of consecutive read-only calls at once
    (tools without ``is_read_only`` run every call alone).
    ``start``, if given, is the conversation to begin from instead of the system prompt and
    ``task``, and the requests and calls already made (``contracts.Start``).
    """
    wire = format_of(chat)
    measured_in = getattr(budget, "wire_format", None)
    if measured_in is not None and named(measured_in).name != wire.name:
        raise ValueError(
            f"the budget measures {named(measured_in).name} messages, but the chat speaks "
            f"{wire.name}: give it wire_format={wire.name!r}"
        )
    return _run(
        chat,
        wire,
        tools,
        task,
        positive_int(max_turns, "max_turns"),
        gate,
        budget,
        hooks or NO_HOOKS,
        prompt_text(system),  # parts that will not do fail here, before the run
        runner,
        _checked(start),
    )


def _checked(start: Start | None) -> Start | None:
    """``start`` if it can begin a run: a list of message dicts, a system message first, and
    counts that are ints of at least 0; else a ``ValueError`` saying what is wrong."""
    if start is None:
        return None
    messages = list(start.messages)
    if not messages or not all(isinstance(m, dict) for m in messages):
        raise ValueError("start.messages must be a non-empty list of message dicts")
    if messages[0].get("role") != "system":
        raise ValueError("start.messages must begin with the system message")
    for name in ("turns", "tool_calls"):
        value = getattr(start, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"start.{name} must be an int of at least 0, got {value!r}")
    return start


class _NoHooks:
    """The hooks of a run that has none: every point asks, and nothing answers."""

    def run(self, point: HookPoint, event: dict) -> list[HookDecision]:
        return []


NO_HOOKS = _NoHooks()


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
    hooks: Hooks,
    system: str,
    runner: CallRunner | None,
    start: Start | None,
) -> Iterator[Event]:
    if start is None:
        start = Start([{"role": "system", "content": system}, {"role": "user", "content": task}])
    messages: list[Message] = [freeze(message) for message in start.messages]
    schemas = freeze(tools.schemas)  # a chat that edits them changes no later run
    names = tool_names(schemas)
    calls_run = start.tool_calls
    stop_denied = False  # a stop hook may send the model back to work once per run

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

    if start.turns == 0:  # a resumed run ran its run_start hooks when it began
        decisions = hooks.run("run_start", {"turn": 0, "task": task, "tools": list(names)})
        yield from _hook_events(decisions, 0)
        context = _context(decisions)
        if context is not None:  # kept: every request carries it from now on
            messages.append(freeze(user_part(context)))

    for turn_number in range(start.turns + 1, max_turns + 1):
        if budget is not None:
            messages = [freeze(message) for message in budget(list(messages))]
        decisions = hooks.run("before_request", {"turn": turn_number, "messages": list(messages)})
        yield from _hook_events(decisions, turn_number)
        part = _context(decisions)  # sent with this request only, never kept
        request = list(messages) if part is None else [*messages, freeze(user_part(part))]
        yield ModelStart(
            type="model_start",
            time=monotonic(),
            turn=turn_number,
            tools=list(names),
            messages=list(request),
        )
        # Read the reply. Only what the model side raises (calling chat, or reading its next
        # chunk) ends the run as model_error; an error in the assembler is a bug and propagates.
        assembler, stream = wire.assembler(), None
        add = assembler.add
        try:
            try:
                stream = chat(list(request), schemas)
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
            reason = "assistant_finished" if turn.text.strip() else "empty_response"
            decisions = hooks.run(
                "stop",
                {"turn": turn_number, "reason": reason, "text": turn.text, "denied": stop_denied},
            )
            yield from _hook_events(decisions, turn_number)
            denial = next((d for d in decisions if d.decision == "deny"), None)
            if denial is not None and not stop_denied:  # back to work, on the same budget
                stop_denied = True
                messages.append(freeze(user_part(f"[hook {denial.hook}] {denial.reason}")))
                continue
            if reason == "assistant_finished":
                yield stopped(reason, turn_number, "the model gave its final answer")
            else:
                yield stopped(reason, turn_number, "the reply had no text and no tool calls")
            return

        results = []
        for batch in batches(turn.calls, tools, runner is not None):
            judged = []
            for call in batch:  # every call of a batch is judged before any of them runs
                judged.append((yield from _judged(call, turn_number, gate, hooks)))
            try:
                outcomes = _ran(batch, judged, tools, runner)
                for call, (arguments, refusal), outcome in zip(batch, judged, outcomes):
                    result, ran = yield from _finished(
                        call, arguments, refusal, outcome, turn_number, hooks, runner
                    )
                    calls_run += ran
                    results.append(result)
            except _Failed as failed:
                yield stopped("tools_failed", turn_number, f"{failed.name}: {failed.error}")
                return
        messages.extend(freeze(message) for message in wire.tool_results(turn.calls, results))

    budget = counted(max_turns, "model request")
    yield stopped("max_turns", max_turns, f"the budget of {budget} is spent")


class _Failed(Exception):
    """The tools can run nothing more (``ToolsFailed``), found by the call ``name``."""

    def __init__(self, name: str, error: ToolsFailed) -> None:
        super().__init__(name, error)
        self.name, self.error = name, error


def _judged(
    call: ToolCall, turn: int, gate: Gate | None, hooks: Hooks
) -> Generator[Event, None, tuple[dict, dict | None]]:
    """What is decided before a call runs, yielding its events (``tool_start``, the
    ``before_tool`` hooks', the gate's); returns ``(arguments, refusal)``: the arguments it
    runs with, and None, or the result the model reads instead when it does not run."""
    yield ToolStart(
        type="tool_start", time=monotonic(), turn=turn, name=call.name, arguments=call.arguments
    )
    arguments = call.arguments
    decisions = hooks.run("before_tool", {"turn": turn, "tool": call.name, "arguments": arguments})
    yield from _hook_events(decisions, turn, call.name)
    for decision in decisions:
        if decision.arguments is not None:  # a later hook saw them already (Hooks.run)
            arguments = freeze(decision.arguments)
    denial = next((d for d in decisions if d.decision == "deny"), None)
    if denial is not None:
        return arguments, {"error": f"{denial.refusal()}. The call did not run."}
    # the gate judges the arguments that would run, so no hook can slip a command past it
    verdict = gate.review(call.name, arguments) if gate is not None else None
    if verdict is not None:
        yield Permission(
            type="permission", time=monotonic(), turn=turn, name=call.name, **verdict.event_fields()
        )
        if not verdict.allowed:
            return arguments, verdict.tool_result()
    return arguments, None


def _ran(
    batch: list[ToolCall],
    judged: list[tuple[dict, dict | None]],
    tools: Tools,
    runner: CallRunner | None,
) -> list[Outcome | None]:
    """Run a batch's allowed calls: one alone here, several through ``runner``; None for a
    call that was refused. ``ToolsFailed`` from a call run here is raised as ``_Failed``."""
    allowed = [index for index, (_, refusal) in enumerate(judged) if refusal is None]
    jobs = [_job(tools, batch[index].name, judged[index][0]) for index in allowed]
    if len(jobs) == 1 or runner is None:
        outcomes = []
        for index, job in zip(allowed, jobs):
            try:
                outcomes.append(Outcome(value=job()))
            except ToolsFailed as exc:
                raise _Failed(batch[index].name, exc) from exc
    else:
        outcomes = runner.run(jobs) if jobs else []
    ran: list[Outcome | None] = [None] * len(batch)
    for index, outcome in zip(allowed, outcomes):
        ran[index] = outcome
    return ran


def _job(tools: Tools, name: str, arguments: dict):
    return lambda: call_tool(tools, name, arguments)


def _finished(
    call: ToolCall,
    arguments: dict,
    refusal: dict | None,
    outcome: Outcome | None,
    turn: int,
    hooks: Hooks,
    runner: CallRunner | None,
) -> Generator[Event, None, tuple[dict, bool]]:
    """What follows a call, yielding its events (a child's run, the ``after_tool`` hooks',
    the ``tool_result``); returns ``(result, whether the tool ran)``."""
    if outcome is None:
        result, ran = refusal, False
    elif outcome.timed_out:
        result = late_result(call.name, getattr(runner, "timeout", None), outcome.started)
        ran = outcome.started
    else:
        if isinstance(outcome.error, ToolsFailed):
            raise _Failed(call.name, outcome.error)
        if outcome.error is not None:  # a bug in a tool run beside others: raised in its place
            raise outcome.error
        result, ran = outcome.value, True
        if isinstance(result, ChildRun):
            yield SubagentRan(
                type="subagent",
                time=monotonic(),
                turn=turn,
                name=call.name,
                task=result.task,
                depth=result.depth,
                events=result.events,
            )
            result = result.result
        decisions = hooks.run(
            "after_tool",
            {"turn": turn, "tool": call.name, "arguments": arguments, "result": result},
        )
        yield from _hook_events(decisions, turn, call.name)
        for decision in decisions:
            if decision.result is not None:
                result = decision.result
        context = _context(decisions)
        if context is not None:
            result = {**result, "hook_context": context}
    yield ToolResult(type="tool_result", time=monotonic(), turn=turn, name=call.name, result=result)
    return result, ran


def user_part(text: str) -> Message:
    """A message the harness adds on a hook's behalf, as the user's (every API takes one)."""
    return {"role": "user", "content": text}


def _context(decisions: list[HookDecision]) -> str | None:
    """The text the hooks at one point added, each part labelled with its hook; None if none."""
    parts = [f"[hook {d.hook}] {d.context}" for d in decisions if d.context]
    return "\n\n".join(parts) if parts else None


def _hook_events(
    decisions: list[HookDecision], turn: int, name: str | None = None
) -> Iterator[Event]:
    for decision in decisions:
        event = {"type": "hook", "time": monotonic(), "turn": turn, **decision.event_fields()}
        if name is not None:
            event["name"] = name
        yield event


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
