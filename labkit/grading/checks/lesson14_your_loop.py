"""Lesson 14's checks: the learner's whole loop, and a batch's resolved rate.

``check_my_loop`` runs ``my_loop(chat, tools, task, max_turns)`` in a fresh ``python -I -S``
process that holds only ``labkit.pieces`` (``driven.py``), the grader playing its model and
tools from scripts (``lesson14_streams.py``): every course recording of the plain loop in
strict replay, lesson 05's failure cases, generated streams, and cases drawn afresh. The run
is ended at the first request or call a right loop would not make; then the events are held
to the lesson's rules. The feedback names the first case that differs and what differed.

``check_resolved_rate`` holds ``resolved_rate(results)`` to the batch's rule: a task is
resolved when the independent test run after it passes, whatever the model said.
"""

from __future__ import annotations

import random

from ...models.replay import first_difference
from ..driven import LoopOutcome, Script, ours, run_loop_answer
from ..feedback import Case, describe_exception, fail, report, run_cases, show
from ..isolated import AnswerError, same
from .common import DRAWN, hidden_cases, learner_answer, new_seed, typed
from .lesson14_streams import (
    drawn_script,
    error_text,
    failure_scripts,
    loop_recordings,
    recorded_script,
)

__all__ = ["check_my_loop", "check_resolved_rate"]

#: What each stop means, said as what to do, for the feedback.
STOP_HINTS = {
    "assistant_finished": "a complete reply with text and no calls ends the run: "
    "assistant_finished",
    "empty_response": "a complete reply with no text and no calls ends the run: empty_response",
    "incomplete_model_turn": "a reply without its final chunk, or cut by the length limit "
    "(turn.unfinished), ends the run as incomplete_model_turn: nothing of it runs or is kept",
    "malformed_model_turn": "a chunk that breaks the format (turn.problem) ends the run as "
    "malformed_model_turn: nothing of the turn runs or is kept; never ask again",
    "model_error": "when calling chat, or reading its next chunk, raises, the run ends as "
    "model_error (catch the exception around both)",
    "max_turns": "after max_turns requests, run the last turn's calls and append their "
    "results, then stop as max_turns, without another request; a turn is one model request, "
    "not one tool call",
}
NEEDED = ("model_start", "tool_start", "tool_result", "stopped")


def check_my_loop(my_loop, *, hidden: bool = False) -> None:
    """``my_loop(chat, tools, task, max_turns)`` yields the events of a run, as the loop does."""
    answer = learner_answer(my_loop, "my_loop")
    cases = [(f"{name} in strict replay", recorded_script(name), "") for name in loop_recordings()]
    cases += failure_scripts()
    if hidden:
        cases += hidden_cases("check_my_loop")
    seed = new_seed()
    draw = random.Random(seed)
    cases += [
        (f"drawn case {n} (seed {seed})", drawn_script(draw), "") for n in range(1, DRAWN + 1)
    ]
    try:
        outcomes = run_loop_answer(answer.source, answer.name, [script for _, script, _ in cases])
    except AnswerError as exc:
        fail(f"my_loop: {exc}")
    for number, ((label, script, hint), outcome) in enumerate(zip(cases, outcomes), 1):
        problem = loop_problem(script, outcome)
        if problem:
            mistake, advice = problem
            heading = f"{answer.name}: case {number} of {len(cases)}, {label}"
            report(heading, tried=described(script), mistake=mistake, hint=advice or hint)
            fail(f"{heading}: {mistake}", printed=True)
    fixed = [label for label, _, _ in cases if not label.startswith("drawn case")]
    print(
        f"All {len(cases)} cases passed: {'; '.join(fixed)}; and {DRAWN} cases drawn afresh "
        "for this run."
    )


def described(script: Script) -> str:
    """A case in words: what the model and the tools do, and what a right loop ends with."""
    requests = sum("request" in step for step in script.steps)
    calls = sum("call" in step for step in script.steps)
    format_ = "" if script.wire_format == "ollama" else f" in {script.wire_format}'s wire format"
    given = f"{_count(requests, 'reply', 'replies')}{format_}, {_count(calls, 'tool call')}"
    if script.raises:
        return f"{given}, max_turns={script.max_turns!r}: a right loop lets {script.raises} out"
    stop = script.stop
    return (
        f"{given}, max_turns={script.max_turns}: a right loop stops with {stop['reason']} "
        f"after {_count(stop['turns'], 'request')} and {_count(stop['tool_calls'], 'call')}"
    )


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"


def _message_hint(difference: str) -> str:
    """What to do about a message that differs from a right loop's."""
    if "differs at role" in difference and 'yours has "tool"' in difference:
        return "append the assistant's message (with its calls) before the calls' results"
    if "differs at content" in difference and "…" not in difference.split("yours has", 1)[1]:
        return (
            "the reply's text is cut short: read the stream to its final chunk before you "
            "judge the turn; text before a call is not an answer"
        )
    return (
        "the conversation is the system prompt and the task, then each reply's message as "
        "the assembler gives it, then its results, one message each (tool_results, or "
        "tool_message), in order"
    )


def loop_problem(script: Script, outcome: LoopOutcome) -> tuple[str, str] | None:
    """``(what differed, what to do)`` for the first rule the loop broke here, or None."""
    raised = outcome.raised
    if outcome.divergence:
        return outcome.divergence, _divergence_hint(outcome.divergence, script)
    if raised is not None and raised.type != script.raises:
        hint = None if raised.type == "NotImplementedError" else (
            "a tool's ValueError, TypeError or OSError becomes {'error': str(exc)}"
            if raised.type in ("ValueError", "TypeError", "OSError") else "")  # fmt: skip
        return describe_exception(raised), hint or ""
    if script.raises and raised is None:
        return f"here {script.raises} must come out of your loop", ""
    if script.raises:
        return None
    if outcome.unreached is not None:
        return _unreached(outcome, script)
    if outcome.too_many:
        return "your loop yielded more than 20,000 events on one case", "does it ever stop?"
    return _events_problem(script, outcome) or _changes_problem(outcome)


def _divergence_hint(text: str, script: Script) -> str:
    if text.startswith("dispatch before done"):
        return (
            "a call runs only once its reply has ended cleanly: read the whole stream, then "
            "ask the turn (may_dispatch) before running anything"
        )
    if "has stopped by then" in text:
        return STOP_HINTS[script.stop["reason"]]
    if "differs from a right loop's" in text:
        return _message_hint(text)
    return ""


def _unreached(outcome: LoopOutcome, script: Script) -> tuple[str, str]:
    step = outcome.unreached
    stops = [e for e in outcome.events if isinstance(e, dict) and e.get("type") == "stopped"]
    said = f" (it stopped with {stops[-1].get('reason')!r})" if stops else ""
    if "request" in step:
        mistake = (
            f"your loop ended after {outcome.requests} request(s){said}, but a right loop sends "
            f"request {outcome.requests + 1} here"
        )
    else:
        name, arguments = step["call"]
        mistake = f"your loop ended{said} without running {name}({show(arguments, 80)})"
    reason = stops[-1].get("reason") if stops else None
    return mistake, STOP_HINTS.get("max_turns") if reason == "max_turns" else (
        "keep going while replies end cleanly with calls; run every call of a turn"
    )  # fmt: skip


def _events_problem(script: Script, outcome: LoopOutcome) -> tuple[str, str] | None:
    events = [e for e in outcome.events if isinstance(e, dict)]
    kinds = [e.get("type") for e in events]
    if len(events) != len(outcome.events):
        return "every event is a dict with a 'type'", "yield dicts such as {'type': 'stopped', ...}"
    if kinds.count("stopped") != 1 or kinds[-1] != "stopped":
        return (
            f"the events must end with exactly one 'stopped' event; yours were {kinds[-6:]}",
            "yield {'type': 'stopped', 'reason': ..., 'turns': ..., 'tool_calls': ..., "
            "'messages': ...} last, whatever happens",
        )
    stopped, want = events[-1], script.stop
    for key in ("reason", "turns", "tool_calls"):
        if not same(stopped.get(key), want[key]):
            hint = {
                "reason": STOP_HINTS[want["reason"]],
                "turns": "'turns' counts the model requests made",
                "tool_calls": "'tool_calls' counts the calls that ran",
            }[key]
            return (
                f"the stop's {key} is {show(stopped.get(key))}, a right loop's {want[key]!r}",
                hint,
            )
    problem = _final_messages_problem(stopped.get("messages"), script)
    if problem:
        return problem, _message_hint(problem)
    starts = [e for e in events if e.get("type") == "model_start"]
    requests = [step["request"] for step in script.steps if "request" in step]
    if len(starts) != len(requests):
        return (
            f"{len(starts)} model_start event(s) for {len(requests)} request(s)",
            "yield one model_start before each request, with the messages it sends",
        )
    for number, (start, request) in enumerate(zip(starts, requests), 1):
        if start.get("turn") != number:
            return f"model_start {number} says turn {start.get('turn')!r}", "turns count from 1"
        difference = first_difference({"messages": request["messages"]}, start.get("messages"), [])
        if difference:
            return f"model_start {number}'s messages are not its request's: {ours(difference)}", ""
    return _tool_events_problem(script, events)


def _final_messages_problem(messages, script: Script) -> str | None:
    if not isinstance(messages, list):
        return f"the stop's messages are {typed(messages)}, not the conversation (a list)"
    if script.stop["messages"] is not None:
        difference = first_difference({"messages": script.stop["messages"]}, messages, [])
        return f"the stop's messages differ: {ours(difference)}" if difference else None
    start, role = script.tail["start"], script.tail["role"]
    difference = first_difference({"messages": start}, messages[: len(start)], [])
    if difference:
        return f"the stop's messages differ from the last request's: {ours(difference)}"
    after = messages[len(start) :]
    if role is None and after:
        return "the stop's messages hold more than the last request, but that reply was not kept"
    if role is not None and not (
        after and isinstance(after[0], dict) and after[0].get("role") == role
    ):
        return f"the stop's messages must end with the last reply's message (role {role!r})"
    return None


def _tool_events_problem(script: Script, events: list) -> tuple[str, str] | None:
    calls = [step for step in script.steps if "call" in step]
    starts = [e for e in events if e.get("type") == "tool_start"]
    results = [e for e in events if e.get("type") == "tool_result"]
    if len(starts) != len(calls) or len(results) != len(calls):
        return (
            f"{len(starts)} tool_start and {len(results)} tool_result event(s) for {len(calls)} "
            "call(s)",
            "yield a tool_start before each call runs and a tool_result after it",
        )
    for number, (step, start, result) in enumerate(zip(calls, starts, results), 1):
        name, arguments = step["call"]
        expected = step["outcome"].get("result")
        if "raise" in step["outcome"]:
            expected = {"error": error_text(step["outcome"])}
        if start.get("name") != name or not same(start.get("arguments"), arguments):
            return f"tool_start {number} is not the call that ran ({name})", ""
        if result.get("name") != name or not same(result.get("result"), expected):
            return (
                f"tool_result {number} holds {show(result.get('result'), 80)}, not the result "
                f"{show(expected, 80)}",
                "a refused call's result is {'error': str(exc)}",
            )
    return None


def _changes_problem(outcome: LoopOutcome) -> tuple[str, str] | None:
    hint = (
        "hand out a fresh list each time (list(messages)): whoever got the old one (the "
        "model's client, a recorder) keeps it"
    )
    if outcome.changed_requests:
        number = outcome.changed_requests[0]
        return f"the list your loop sent with request {number} changed after it was sent", hint
    if outcome.changed_events:
        number = outcome.changed_events[0] + 1
        return f"event {number} changed after your loop had yielded it", hint
    if outcome.schemas_changed:
        return "your loop changed tools.schemas, the caller's list", "only read the schemas"
    return None


# --- 14b: the resolved rate --------------------------------------------------------------


def rate_reference(results: list) -> float:
    """The reference: resolved attempts over all attempts; resolved means the tests after the
    attempt passed (exit code 0, some passed, none failed) with the test file unchanged."""
    resolved = 0
    for row in results:
        after = row.get("tests_after")
        if after and after["exit_code"] == 0 and after["failed"] == 0 and after["passed"] > 0:
            resolved += row.get("tests_unchanged") is True
    return resolved / len(results) if results else 0.0


def _row(task, stop, after, unchanged=True, text="", turns=4) -> dict:
    tests = None if after is None else dict(zip(("exit_code", "passed", "failed"), after))
    return {"task": task, "stop": stop, "tests_after": tests, "tests_unchanged": unchanged,
            "turns": turns, "tool_calls": turns - 1, "final_text": text}  # fmt: skip


CLAIM = "All the tests pass now."
RATE_CASES = [
    ("every task resolved", [_row("a", "assistant_finished", (0, 4, 0), text=CLAIM)], ""),
    ("a false claim", [_row("a", "assistant_finished", (0, 4, 0), text=CLAIM),
                       _row("b", "assistant_finished", (1, 2, 1), text=CLAIM)],
     "the model said the tests pass; the tests after the attempt say they do not"),
    ("resolved without a final message", [_row("a", "max_turns", (0, 3, 0), text=""),
                                          _row("b", "incomplete_model_turn", (1, 2, 1))],
     "the budget stopped the run after the fix: the tests pass, so it is resolved"),
    ("a failed attempt counts", [_row("a", "assistant_finished", (0, 2, 0)),
                                 _row("b", "attempt_timeout", None, unchanged=None)],
     "an attempt that failed is an attempt that did not resolve its task"),
    ("an edited test file", [_row("a", "assistant_finished", (0, 3, 0), unchanged=False),
                             _row("b", "max_turns", (0, 3, 0))],
     "a green run on edited tests proves nothing"),
    ("no results", [], "no attempts: a rate of 0.0"),
]  # fmt: skip


def check_resolved_rate(resolved_rate, *, hidden: bool = False) -> None:
    """``resolved_rate(results)``: the share of attempts whose tests pass after them."""
    answer = learner_answer(resolved_rate, "resolved_rate")
    listed = RATE_CASES + (hidden_cases("check_resolved_rate") if hidden else [])
    seed = new_seed()
    draw = random.Random(seed)
    listed += [
        (f"drawn case {n} (seed {seed})", _drawn_rows(draw), "") for n in range(1, DRAWN + 1)
    ]
    cases = [
        Case(label, [rows], rate_reference(rows), hint=hint,
             shown=f"resolved_rate(<{len(rows)} rows: {', '.join(r['stop'] for r in rows)}>)")
        for label, rows, hint in listed
    ]  # fmt: skip
    run_cases(answer, cases, _rate_problem, what="resolved_rate")


def _drawn_rows(draw: random.Random) -> list:
    rows = []
    for number in range(draw.randrange(1, 9)):
        stop = draw.choice(["assistant_finished", "assistant_finished", "max_turns",
                            "incomplete_model_turn", "attempt_failed"])  # fmt: skip
        passed, failed = draw.randrange(0, 5), draw.randrange(0, 3)
        after = (
            None if stop == "attempt_failed" else (int(failed > 0 or not passed), passed, failed)
        )
        text = draw.choice(["", CLAIM, "I could not fix it."])
        rows.append(_row(f"t{number}", stop, after, draw.random() < 0.9 if after else None, text))
    return rows


def _rate_problem(got, case, outcome) -> str | None:
    if isinstance(got, bool) or not isinstance(got, int | float):
        return f"return the share as a number (a float), not {typed(got)}"
    if not same(outcome.arguments[0], case.arguments[0]):
        return "your function changed the rows it was given: only read them"
    if abs(got - case.expected) < 1e-9:
        return None
    rows = case.arguments[0]
    for mistake, rate in _MISREADINGS:
        if abs(got - rate(rows)) < 1e-9:
            return mistake
    return f"{got!r}, but {case.expected!r} of these attempts left their tests passing"


def _share(rows: list, counted) -> float:
    return sum(map(counted, rows)) / len(rows) if rows else 0.0


def _passing(row: dict, exit_code_only: bool = False) -> bool:
    after = row.get("tests_after")
    if not after:
        return False
    return after["exit_code"] == 0 and (exit_code_only or after["failed"] == 0 < after["passed"])


#: Plausible misreadings of the rule, each with what it gets wrong, in the order they are named.
_MISREADINGS = [
    ("that is the share that stopped with assistant_finished: the model's word, not the tests'",
     lambda rows: _share(rows, lambda r: r["stop"] == "assistant_finished")),
    ("a run whose test file changed counts as resolved in yours: green tests that were edited "
     "prove nothing (tests_unchanged)", lambda rows: _share(rows, _passing)),
    ("your share leaves out the attempts that failed (no tests_after): they are attempts that "
     "did not resolve their task",
     lambda rows: rate_reference([r for r in rows if r.get("tests_after")])),
    ("exit code 0 alone is not enough: some tests ran and none failed",
     lambda rows: _share(rows, lambda r: _passing(r, True) and r.get("tests_unchanged") is True)),
]  # fmt: skip
