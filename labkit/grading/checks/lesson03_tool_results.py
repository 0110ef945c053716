"""Lesson 03's check: each tool call run, and its result appended to the conversation."""

from __future__ import annotations

import builtins
import random

from ...harness.sample import SAMPLE_DIR, SOURCE_FILE, TEST_FILE
from ...models.chunks import call as _call
from ..feedback import Case, Miss, changed_input, run_cases, show
from ..isolated import RAISABLE, Other, same, tools_value, unchanged
from .common import (
    DRAWN,
    TOOL_NAMES,
    hidden_cases,
    learner_answer,
    new_seed,
    random_result,
    random_text,
    tool_message,
    tool_message_problem,
)

__all__ = ["check_append_results"]

_START = [
    {"role": "system", "content": "(the system prompt)"},
    {"role": "user", "content": "(the task)"},
]
_APPENDED_FROM = len(_START) + 1  # after the start and the assistant message with the calls


def check_append_results(append_tool_results, *, hidden: bool = False) -> None:
    """``append_tool_results(messages, tool_calls, tools)`` runs each call and appends its
    result."""
    answer = learner_answer(append_tool_results, "append_tool_results")
    source = (SAMPLE_DIR / SOURCE_FILE).read_text(encoding="utf-8")
    tests = (SAMPLE_DIR / TEST_FILE).read_text(encoding="utf-8")
    read_source = _step(
        "read_file", {"path": SOURCE_FILE}, result={"path": SOURCE_FILE, "content": source}
    )
    read_tests = _step(
        "read_file", {"path": TEST_FILE}, result={"path": TEST_FILE, "content": tests}
    )
    calls = [
        ("one read_file call", [read_source], ""),
        (
            "two calls, in order",
            [read_source, read_tests],
            "run the calls one after another, in the order the model gave them",
        ),
        (
            "an unknown tool, then a good call",
            [
                _step(
                    "grep",
                    {"pattern": "PurePosixPath"},
                    error=(
                        "ValueError",
                        "unknown tool 'grep'; the tools are: read_file, replace_text, run_tests",
                    ),
                ),
                read_tests,
            ],
            "an unknown tool raises ValueError: it becomes an error result and the next call "
            "still runs",
        ),
        (
            "arguments the tool refuses",
            [
                _step(
                    "read_file",
                    {"path": "../../etc/passwd"},
                    error=(
                        "ValueError",
                        "path '../../etc/passwd' is not allowed; use one of: path_rules.py, "
                        "tests/test_path_rules.py",
                    ),
                ),
                _step(
                    "read_file",
                    {"path": 7},
                    error=("TypeError", "read_file: 'path' must be a string, not int"),
                ),
            ],
            "a refused call (ValueError, TypeError) becomes {'error': str(exc)}",
        ),
        (
            "a tool that raises OSError",
            [
                _step(
                    "read_file",
                    {"path": SOURCE_FILE},
                    error=("OSError", [5, "Input/output error", SOURCE_FILE]),
                )
            ],
            "OSError is a tool error too: {'error': str(exc)}, the whole message",
        ),
        ("no tool calls", [], "nothing to run, nothing to append"),
    ]
    calls += hidden_cases("check_append_results", read_source=read_source) if hidden else []
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        calls.append(
            (
                f"drawn case {number} (seed {seed})",
                [_random_step(draw) for _ in range(draw.randrange(1, 5))],
                "",
            )
        )
    cases = []
    for label, steps, hint in calls:
        tool_calls = [_call(name, **arguments) for name, arguments, _ in steps]
        assistant = {"role": "assistant", "content": "", "tool_calls": tool_calls}
        expected = [
            tool_message(
                name,
                outcome.get("result")
                if "raise" not in outcome
                else {"error": _error_text(outcome)},
            )
            for name, _, outcome in steps
        ]
        cases.append(
            Case(
                label,
                [[*_START, assistant], tool_calls, tools_value(steps)],
                expected,
                shown=f"append_tool_results(messages, {show(tool_calls, 200)}, tools)",
                hint=hint,
            )
        )
    buggy = [read_source, _step("read_file", {"path": TEST_FILE}, error=("KeyError", ["path"]))]
    buggy_calls = [_call(name, **arguments) for name, arguments, _ in buggy]
    cases.append(
        Case(
            "a tool with a bug raises KeyError",
            [
                [*_START, {"role": "assistant", "content": "", "tool_calls": buggy_calls}],
                buggy_calls,
                tools_value(buggy),
            ],
            expected=None,
            raises="KeyError",
            shown=f"append_tool_results(messages, {show(buggy_calls, 200)}, tools)",
            hint="only ValueError, TypeError and OSError are the model's mistakes; any other "
            "exception is a bug in the harness and must not be dressed up as a result",
        )
    )
    run_cases(
        answer,
        cases,
        _appended_problem,
        what="append_tool_results",
        conversation=True,
        observe=lambda got, outcome: outcome.arguments[0][_APPENDED_FROM:],
        error_hints={
            (
                "ValueError",
                "TypeError",
                "OSError",
                "FileNotFoundError",
            ): "a tool raised and your function let the error out: catch "
            "ValueError, TypeError and OSError around tools.invoke and use "
            "{'error': str(exc)} as the result, so the loop can go on",
            "KeyError": "each call looks like {'function': {'name': ..., 'arguments': {...}}}",
        },
    )


def _step(name, arguments, *, result=None, error=None) -> list:
    """One tool call of a case and what the scripted tools answer to it: a result, or an
    exception ``(type name, message or list of its arguments)``."""
    if error is None:
        return [name, arguments, {"result": result}]
    kind, args = error
    return [name, arguments, {"raise": kind, "args": args if isinstance(args, list) else [args]}]


#: The exceptions a scripted tool may raise, to know what ``str(exc)`` says.
_EXCEPTIONS = {name: getattr(builtins, name) for name in RAISABLE}


def _error_text(outcome: dict) -> str:
    """``str(exc)`` of the exception a scripted tool raises (OSError with an errno included)."""
    return str(_EXCEPTIONS[outcome["raise"]](*outcome["args"]))


def _random_step(draw: random.Random) -> list:
    name = draw.choice(TOOL_NAMES + ("grep", "delete_repo"))
    arguments = {
        key: random_text(draw) for key in draw.sample(["path", "old", "new"], draw.randrange(0, 3))
    }
    kind = draw.choice(["result", "result", "ValueError", "TypeError", "OSError"])
    if kind == "result":
        return _step(name, arguments, result=random_result(draw))
    if kind == "OSError" and draw.random() < 0.5:  # with an errno and a file name
        return _step(
            name,
            arguments,
            error=(kind, [draw.randrange(1, 40), random_text(draw, 1), random_text(draw, 1)]),
        )
    return _step(name, arguments, error=(kind, random_text(draw) or "refused"))


def _appended_problem(got, case, outcome):
    messages, tool_calls, _ = outcome.arguments
    start, expected = _APPENDED_FROM, case.expected
    script = case.arguments[2]["script"]
    if isinstance(messages, Other) or not isinstance(messages, list):
        return Miss(
            "the messages list was replaced by something else",
            hint="append to `messages` itself: messages.append(message)",
        )
    if not unchanged(tool_calls, case.arguments[1]):
        return changed_input(
            "the list of tool calls",
            tool_calls,
            case.arguments[1],
            ": in the loop that list is the one inside the assistant message",
            hint="read the calls with `for call in tool_calls:`, without taking calls out of "
            "the list (no .pop())",
        )
    if not unchanged(messages[:start], case.arguments[0][:start]):
        return changed_input(
            "the messages already in the list",
            messages[:start],
            case.arguments[0][:start],
            hint="the conversation only grows: append the tool messages after the others, "
            "and leave the assistant's message as it is",
            they=True,
        )
    wanted = [[name, arguments] for name, arguments, _ in script]
    if len(outcome.invoked) != len(wanted):
        return Miss(
            f"tools.invoke ran {len(outcome.invoked)} time(s) for {len(wanted)} tool call(s) "
            "(got: the tool calls your function ran; expected: the calls to run)",
            compared=(outcome.invoked, wanted),
            hint="run each call exactly once, even when two calls are alike, and go on with "
            "the next call after one that failed",
        )
    if not same(outcome.invoked, wanted):
        return Miss(
            "the tools ran in a different order, or with other arguments, than the calls gave "
            "(got: the tool calls your function ran; expected: the calls to run)",
            compared=(outcome.invoked, wanted),
            hint="run the calls in the order of tool_calls, each with "
            "call['function']['arguments'] as it is",
        )
    added = messages[start:]
    if not added and expected:
        if isinstance(got, list):
            return Miss(
                "you returned a new list, but the list you were given is unchanged",
                hint="append to `messages` itself (the loop keeps using that list): "
                "messages.append(message), and return nothing",
            )
        return Miss(
            f"nothing was appended to the list you were given for {len(wanted)} tool call(s)",
            hint="`messages = messages + [...]` or `messages = [...]` only makes a new list "
            "the loop never sees: use messages.append(message)",
        )
    if len(added) != len(wanted):
        missing = _unanswered(added, expected)
        failed = [number for number in missing if "raise" in script[number][2]]
        if missing and failed == missing:
            number = missing[0]
            return Miss(
                f"no tool message for call {number + 1} ({script[number][0]}), whose tool "
                f"raised {script[number][2]['raise']}: {len(added)} message(s) for "
                f"{len(wanted)} tool call(s)",
                hint="an error is a result too: for a call whose tool raised, append the tool "
                "message of {'error': str(exc)}, then go on with the next call",
            )
        return Miss(
            f"{len(added)} message(s) were appended for {len(wanted)} tool call(s)",
            hint="append exactly one tool message per call, in the order of the calls",
        )
    for number, (message, wanted_message) in enumerate(zip(added, expected), 1):
        problem = tool_message_problem(message, wanted_message)
        if problem:
            return f"tool message {number}: {problem}"
    return None


def _unanswered(added: list, expected: list) -> list[int]:
    """The indexes of the expected messages that ``added`` lacks, matched in order."""
    missing, position = [], 0
    for index, message in enumerate(expected):
        if position < len(added) and same(added[position], message):
            position += 1
        else:
            missing.append(index)
    return missing
