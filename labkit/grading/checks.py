"""The checks behind the lessons' graded exercises: one function per exercise.

A notebook's test cell calls one of these with the learner's answer. The check takes
the source of the answer cell (not the function object) and runs it in a fresh Python
process (:mod:`labkit.grading.isolated`) on fixed cases, on cases drawn afresh from a random
seed and, for linear-time exercises, on two stream sizes to see how its time grows.
Only after that process ended are its outputs compared, here, with the expected
values, which come from small references in this file or are written out by hand
(never from the harness's ``turns``, ``loop`` or ``tools``: a bug there must
not become the right answer). The first miss is explained and raises
``AssertionError``, so nbgrader scores the cell 0.

``hidden=True`` (used in the test cells' hidden part) adds more cases. ``grade``
runs a check from an answer cell's source, for regrading outside the kernel.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import json
import linecache
import os
import random
import string
import textwrap

from ..harness.sample import SAMPLE_DIR, SOURCE_FILE, TEST_FILE
from ..models.chunks import call as _call
from ..models.chunks import chunk
from ..settings import RECORDINGS_DIR
from .feedback import Answer, Case, CheckFailed, check_linear_time, fail, run_cases, show
from .isolated import (
    AnswerError,
    Other,
    run_answer,
    run_counts_value,
    same,
    tools_value,
    unchanged,
)

__all__ = [
    "check_tool_message",
    "check_assemble_content",
    "check_may_dispatch",
    "check_append_results",
    "check_repair_verdict",
    "check_bounded_prediction",
    "check_stop_predictions",
]

TOOL_MESSAGE_KEYS = ("role", "tool_name", "content")
#: The loop's stop reasons, written out (a test holds them equal to the harness's).
STOP_REASON_NAMES = (
    "assistant_finished",
    "empty_response",
    "incomplete_model_turn",
    "malformed_model_turn",
    "model_error",
    "max_turns",
)
#: Stream sizes (fragments) of the linear-time checks, 48x apart; per size the least time of
#: `repeats` distinct streams counts.
TIMING = {"sizes": [1_000, 48_000], "repeats": 2}
DRAWN = 6  # cases drawn afresh per run


def learner_answer(function, name: str) -> Answer:
    """The source of the cell that defined ``function`` (the whole cell, helpers included).

    The check runs that source, not the function object: the object lives in the
    learner's kernel, where anything may have been patched."""
    if isinstance(function, Answer):
        return function
    code = getattr(function, "__code__", None)
    if not callable(function) or code is None:
        fail(
            f"{name} should be a function, but it is {show(function, 80)}",
            hint="define it with `def` in the answer cell above and run that cell first",
        )
    if os.path.exists(code.co_filename):  # a module on disk: just the function
        try:
            return Answer(textwrap.dedent(inspect.getsource(function)), function.__name__)
        except (OSError, TypeError):
            pass
    lines = linecache.getlines(code.co_filename)  # a notebook cell: the whole cell
    if not lines:
        fail(
            f"the source of {name} cannot be found",
            hint="define it with `def` in the answer cell above and run that cell again",
        )
    return Answer("".join(lines), function.__name__)


def grade(check: str, source: str, name: str, *, hidden: bool = False) -> tuple:
    """Run one check on an answer cell's source; return ``(passed, feedback text)``.

    Every way the check can end without passing is a failed verdict, never an error that
    escapes: autograding must go on to the next cell and the next learner."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            globals()[check](Answer(source, name), hidden=hidden)
        except CheckFailed as exc:
            return False, printed.getvalue() + f"AssertionError: {exc}\n"
        except Exception as exc:  # noqa: BLE001 (whatever an answer did to the check)
            return False, (
                printed.getvalue() + f"AssertionError: the check could not finish "
                f"on this answer ({type(exc).__name__}: {str(exc)[:300]})\n"
            )
    return True, printed.getvalue()


def _seed() -> int:
    return random.SystemRandom().randrange(10**6)


# --- Lesson 01: the tool message -----------------------------------------------------------


def check_tool_message(make_tool_message, *, hidden: bool = False) -> None:
    """``make_tool_message(name, result)`` returns the tool message that carries ``result``."""
    answer = learner_answer(make_tool_message, "make_tool_message")
    source = (SAMPLE_DIR / SOURCE_FILE).read_text(encoding="utf-8")
    results = [
        ("a replace_text result", "replace_text", {"path": SOURCE_FILE, "replaced": 1}, ""),
        (
            "the read_file result of lesson 01",
            "read_file",
            {"path": SOURCE_FILE, "content": source},
            "file text holds quotes, backslashes and newlines: json.dumps escapes them all",
        ),
        (
            "a run_tests result with true/false",
            "run_tests",
            {"exit_code": 1, "timed_out": False, "output": "1 failed, 3 passed in 0.04s"},
            "JSON writes false, Python writes False: only json.dumps gives JSON",
        ),
        (
            "an error result",
            "read_file",
            {
                "error": "path '/etc/passwd' is not allowed; use one of: path_rules.py, "
                "tests/test_path_rules.py"
            },
            "an error is a result like any other: the model must be able to read it",
        ),
        (
            "non-ASCII text",
            "read_file",
            {"path": "NOTES.md", "content": "Grüße, naïve café — 東京 ✓"},
            "JSON text can carry any character",
        ),
        (
            "control characters",
            "run_tests",
            {"exit_code": 0, "output": "\x1b[32m4 passed\x1b[0m\r\nform feed\x0c, nul \x00"},
            "JSON escapes every control character, not only \\n and \\t: let json.dumps do it",
        ),
        (
            "a result shaped like another tool's",
            "replace_text",
            {"exit_code": 0, "output": "4 passed"},
            "tool_name is the name of the tool that was called, whatever its result looks like",
        ),
    ]
    if hidden:
        results.append(("an empty result", "run_tests", {}, "an empty dict is the JSON text '{}'"))
    seed = _seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        results.append(
            (
                f"drawn case {number} (seed {seed})",
                draw.choice(TOOL_NAMES),
                _random_result(draw),
                "any result, any text: json.dumps(result)",
            )
        )
    cases = [
        Case(label, [name, result], _tool_message(name, result), hint=hint)
        for label, name, result, hint in results
    ]
    run_cases(answer, cases, _tool_message_answer_problem, what="make_tool_message")


TOOL_NAMES = ("read_file", "replace_text", "run_tests")


def _tool_message(name: str, result) -> dict:
    """The reference: a tool message is the tool's name and its result as JSON text."""
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}


def _tool_message_answer_problem(got, case, outcome) -> str | None:
    problem = tool_message_problem(got, case.expected)
    if problem is None and not unchanged(outcome.arguments[1], case.arguments[1]):
        return (
            "your function changed the result it was given (afterwards it is "
            f"{show(outcome.arguments[1], 80)}): build the message without changing `result`, "
            "the loop still needs it"
        )
    return problem


def tool_message_problem(got, expected: dict) -> str | None:
    """Name what is wrong with a tool message, compared with the expected one."""
    if not isinstance(got, dict):
        return f"a tool message is a dict, but this is {_typed(got)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    if "tool_name" not in got and "name" in got:
        return "the tool's name goes under the key 'tool_name' (Ollama's field), not 'name'"
    missing = [key for key in TOOL_MESSAGE_KEYS if key not in got]
    if missing:
        return f"the message has no {', '.join(repr(k) for k in missing)} key"
    extra = sorted(set(got) - set(TOOL_MESSAGE_KEYS), key=str)
    if extra:
        return f"unexpected key(s) {extra}: a tool message has exactly role, tool_name and content"
    if not same(got["role"], "tool"):
        return f"role is {_typed(got['role'])}; it must be exactly 'tool'"
    if not same(got["tool_name"], expected["tool_name"]):
        return (
            f"tool_name is {_typed(got['tool_name'])}, but the result came from "
            f"{expected['tool_name']!r}"
        )
    return _content_problem(got["content"], json.loads(expected["content"]))


def _content_problem(content, result) -> str | None:
    if isinstance(content, (dict, list)):
        return (
            "content is the result object itself, but a message's content is text: "
            "turn the result into JSON text with json.dumps(result)"
        )
    if not isinstance(content, str):
        return f"content is {_typed(content)}, not text: use json.dumps(result)"
    try:
        decoded = json.loads(content)
    except ValueError as exc:
        if content in (str(result), repr(result)):
            return (
                "content is str(result), Python's own notation (single quotes, True, None), "
                "which is not JSON: use json.dumps(result)"
            )
        return f"content is not valid JSON text ({exc}): use json.dumps(result)"
    if isinstance(decoded, str) and isinstance(result, dict) and decoded == result.get("error"):
        return (
            "content is JSON of the error's text alone: an error result is the dict "
            "{'error': str(exc)}, so the model can tell it from a tool's normal result"
        )
    if isinstance(decoded, str) and not isinstance(result, str):
        return "content is JSON of a string, not of the result: was json.dumps applied twice?"
    if not same(decoded, result):
        return f"content is JSON, but it decodes to {show(decoded, 120)}, not to the tool's result"
    return None


#: What drawn text is made of: letters, JSON's special characters, control characters
#: (\r, \x0c, \x00, \x1b...) and text beyond ASCII, so only a real JSON encoder gets it right.
TEXT_ALPHABET = (
    string.ascii_letters
    + string.digits
    + " \"'\\\n\t{}[]:,/"
    + "\r\x0c\x08\x00\x1b\x7f\u2028"
    + "é東✓😀"
)


def _random_text(draw: random.Random, low: int = 0, high: int = 40) -> str:
    return "".join(draw.choices(TEXT_ALPHABET, k=draw.randrange(low, high)))


def _random_value(draw: random.Random, depth: int = 0):
    kind = draw.choice(
        ["text", "int", "float", "bool", "none"] + (["list", "dict"] if depth < 2 else [])
    )
    if kind == "text":
        return _random_text(draw)
    if kind == "int":
        return draw.randrange(-(10**6), 10**6)
    if kind == "float":
        return round(draw.uniform(-100, 100), 3)
    if kind == "bool":
        return draw.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        return [_random_value(draw, depth + 1) for _ in range(draw.randrange(4))]
    return _random_result(draw, depth + 1)


def _random_result(draw: random.Random, depth: int = 0) -> dict:
    keys = ["path", "content", "exit_code", "timed_out", "output", "error", "replaced", "note"]
    return {key: _random_value(draw, depth) for key in draw.sample(keys, draw.randrange(1, 5))}


# --- Lesson 02: assembling a streamed turn -------------------------------------------------


def check_assemble_content(assemble_content, *, hidden: bool = False) -> None:
    """``assemble_content(chunks)`` returns the assistant text of a stream, in linear time."""
    answer = learner_answer(assemble_content, "assemble_content")
    streams = [
        (
            "three text fragments",
            [_chunk("The "), _chunk("tests "), _chunk("pass."), _chunk(done=True)],
            "",
        ),
        (
            "thinking before the text",
            [
                _chunk(thinking="The user wants "),
                _chunk(thinking="a summary."),
                _chunk("Here is "),
                _chunk("the summary."),
                _chunk(done=True),
            ],
            "thinking is the model's scratch work: it is not part of the assistant's content",
        ),
        (
            "text on the final chunk",
            [_chunk("Almost"), _chunk(" done.", done=True)],
            "the final (done) chunk can carry text too",
        ),
        (
            "chunks whose message has no content",
            [
                _chunk(thinking="Reading first.", content=None),
                _chunk("Reading"),
                _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)], content=None),
                _chunk(content_none=True),
                _chunk(" the file."),
                _chunk(done=True),
            ],
            "a chunk's message may lack 'content' or hold None: skip it (message.get('content'))",
        ),
        (
            "a tool call and no text",
            [
                _chunk(thinking="I need the file."),
                _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)]),
                _chunk(done=True),
            ],
            "a turn that only calls a tool has empty content: ''",
        ),
        ("an empty stream", [], "no chunks, no text: ''"),
        (
            "the same fragment twice in a row",
            [_chunk("Ha"), _chunk("ha"), _chunk("ha"), _chunk("!"), _chunk(done=True)],
            "every fragment counts, even one equal to the one before it",
        ),
        (
            "text that starts and ends with white space",
            [_chunk("\n  def f():\n"), _chunk("      return 1"), _chunk("\n\n"), _chunk(done=True)],
            "keep the text exactly as it came, spaces and newlines included: no strip()",
        ),
        ("the recorded final summary (repair.json, turn 5)", _recorded_chunks("repair", 5), ""),
    ]
    if hidden:
        streams.append(("one fragment", [_chunk("x", done=True)], ""))
    seed = _seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        streams.append((f"drawn case {number} (seed {seed})", _random_stream(draw, done=True), ""))
    cases = [
        Case(
            label,
            [chunks],
            _joined_content(chunks),
            shown=f"assemble_content(chunks), chunks: {describe_stream(chunks)}",
            hint=hint,
        )
        for label, chunks, hint in streams
    ]
    run_cases(
        answer,
        cases,
        _assembled_problem,
        what="assemble_content",
        error_hints={
            "KeyError": "not every chunk's message has 'content': use "
            "chunk['message'].get('content') and skip what is empty",
            "TypeError": "some chunks have content None: skip them before joining",
        },
    )
    _check_linear(answer)


def _joined_content(chunks) -> str:
    """The reference: every chunk's text, in order; thinking and missing text left out."""
    return "".join(chunk["message"].get("content") or "" for chunk in chunks)


_LINEAR_REFERENCE = """
def assemble_content(chunks):
    return "".join(chunk["message"].get("content") or "" for chunk in chunks)
"""


def _check_linear(answer: Answer) -> None:
    """Fail when the answer's time grows much faster than a linear reference's as the stream
    grows. The streams are drawn afresh: text, thinking, tool calls and missing content mixed,
    each one different, so neither a cache nor a shortcut for one kind of fragment helps."""
    draw = random.Random(_seed())
    inputs = {
        size: [[_long_stream(draw, size)] for _ in range(TIMING["repeats"])]
        for size in TIMING["sizes"]
    }
    check_linear_time(
        answer,
        (_LINEAR_REFERENCE, "assemble_content"),
        inputs,
        lambda arguments: _joined_content(arguments[0]),
        what="streams",
        unit="fragments",
        hint="collect the fragments in a list and join them once: adding each "
        "one to a string kept in a dict (or rebuilt with +) copies the whole "
        "text every time",
    )


def _long_stream(draw: random.Random, fragments: int) -> list:
    """A stream of the linear-time check: ``fragments`` token-sized pieces, mostly text and
    thinking (so an answer quadratic in either is far over the limit), then a final chunk."""
    return _random_stream(draw, done=True, length=fragments, text=(6, 12), weights=(10, 6, 1, 1, 1))


def _assembled_problem(got, case, outcome) -> str | None:
    expected, chunks = case.expected, case.arguments[0]
    if not isinstance(got, str):
        hint = " (join the fragments: ''.join(parts))" if isinstance(got, list) else ""
        return f"assemble_content should return text (a str), but returned {_typed(got)}{hint}"
    if not unchanged(outcome.arguments[0], chunks):
        return "your function changed the chunks it was given: only read them"
    if got == expected:
        return None
    thoughts = [c["message"].get("thinking") for c in chunks if c["message"].get("thinking")]
    if any(t in got and t not in expected for t in thoughts):
        return "the thinking text leaked into the content: use only message['content']"
    last = chunks[-1]["message"].get("content") if chunks else None
    if last and got == expected[: len(expected) - len(last)]:
        return "the text on the final (done) chunk is missing"
    return "the text differs from the assistant's content"


def check_may_dispatch(may_dispatch, *, hidden: bool = False) -> None:
    """``may_dispatch(chunks)`` is True only when the turn finished normally."""
    answer = learner_answer(may_dispatch, "may_dispatch")
    first = _recorded_chunks("repair", 1)
    streams = [
        (
            "a complete tool-call turn (repair.json, turn 1)",
            first,
            "the done chunk arrived with done_reason 'stop': the tool call may run",
        ),
        (
            "the same turn with its done chunk missing",
            [c for c in first if not c["done"]],
            "the tool call arrived on a done:false chunk, but the stream ended without a done "
            "chunk: the turn is incomplete, so nothing may run",
        ),
        (
            "a turn cut by the output-length limit",
            [
                _chunk(thinking="I will read"),
                _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)]),
                _chunk(done=True, done_reason="length"),
            ],
            "done_reason 'length' means the server cut the reply: refuse it",
        ),
        (
            "a complete turn with text and no tool calls",
            [_chunk("All 4 tests pass."), _chunk(done=True)],
            "may_dispatch asks whether the turn finished normally, not whether it called a tool",
        ),
        (
            "a stream whose only chunk is the final one",
            [_chunk("Done.", done=True)],
            "the done chunk can be the first and only chunk",
        ),
        ("an empty stream", [], "no done chunk arrived, so the turn is not complete"),
        (
            "a done chunk that names no done_reason",
            [
                _chunk(tool_calls=[_call("run_tests")]),
                {key: value for key, value in _chunk(done=True).items() if key != "done_reason"},
            ],
            "only 'length' refuses a finished turn; a done chunk without a reason still "
            "finishes it",
        ),
        (
            "a complete turn whose text talks about length",
            [_chunk("The length limit was not reached."), _chunk(done=True)],
            "look at the done chunk's done_reason, not at the words of the text",
        ),
    ]
    if hidden:
        streams.append(
            (
                "a length cut with text only",
                [_chunk("The answer is"), _chunk(done=True, done_reason="length")],
                "done_reason 'length' means the reply was cut, whatever it holds",
            )
        )
    seed = _seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN // 2 + 1):  # pairs of equal length and opposite verdicts
        complete = _random_stream(draw, done=True)
        cut = (
            [*complete[:-1], _chunk(done=True, done_reason="length")]
            if draw.random() < 0.5
            else [*complete[:-1], _chunk("...")]
        )
        streams.append((f"drawn case {2 * number - 1} (seed {seed})", complete, ""))
        streams.append((f"drawn case {2 * number} (seed {seed})", cut, ""))
    cases = [
        Case(
            label,
            [chunks],
            _dispatchable(chunks),
            shown=f"may_dispatch(chunks), chunks: {describe_stream(chunks)}",
            hint=hint,
        )
        for label, chunks, hint in streams
    ]
    run_cases(
        answer,
        cases,
        _verdict_problem,
        what="may_dispatch",
        error_hints={
            "KeyError": "look keys up with .get(): 'done_reason' is only on the done chunk",
            "IndexError": "a stream can be empty: chunks[-1] does not exist then",
        },
    )


def _dispatchable(chunks) -> bool:
    """The reference: a done chunk arrived, and it does not say the reply was cut."""
    final = [chunk for chunk in chunks if chunk.get("done") is True]
    return bool(final) and final[-1].get("done_reason") != "length"


def _verdict_problem(got, case, outcome) -> str | None:
    if not isinstance(got, bool):
        forgot = ": did you forget `return`?" if got is None else ""
        return f"return True or False, not {_typed(got)}{forgot}"
    if got != case.expected:
        return f"returned {got}, but the right answer here is {case.expected}"
    if isinstance(case.arguments[0], list) and not unchanged(
        outcome.arguments[0], case.arguments[0]
    ):
        return "your function changed the chunks it was given: only read them"
    return None


# --- Lesson 03: tool results back into the conversation ------------------------------------

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
    if hidden:
        calls.append(
            (
                "the same call twice",
                [read_source, read_source],
                "each call runs, even when two are alike",
            )
        )
    seed = _seed()
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
            _tool_message(
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


#: The exceptions a scripted tool raises, to know what ``str(exc)`` says.
_EXCEPTIONS = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "OSError": OSError,
    "KeyError": KeyError,
}


def _error_text(outcome: dict) -> str:
    """``str(exc)`` of the exception a scripted tool raises (OSError with an errno included)."""
    return str(_EXCEPTIONS[outcome["raise"]](*outcome["args"]))


def _random_step(draw: random.Random) -> list:
    name = draw.choice(TOOL_NAMES + ("grep", "delete_repo"))
    arguments = {
        key: _random_text(draw) for key in draw.sample(["path", "old", "new"], draw.randrange(0, 3))
    }
    kind = draw.choice(["result", "result", "ValueError", "TypeError", "OSError"])
    if kind == "result":
        return _step(name, arguments, result=_random_result(draw))
    if kind == "OSError" and draw.random() < 0.5:  # with an errno and a file name
        return _step(
            name,
            arguments,
            error=(kind, [draw.randrange(1, 40), _random_text(draw, 1), _random_text(draw, 1)]),
        )
    return _step(name, arguments, error=(kind, _random_text(draw) or "refused"))


def _appended_problem(got, case, outcome) -> str | None:
    messages, tool_calls, _ = outcome.arguments
    start, expected = _APPENDED_FROM, case.expected
    if isinstance(messages, Other) or not isinstance(messages, list):
        return "the messages list was replaced by something else: append to it"
    if isinstance(got, list) and len(messages) == start and expected:
        return (
            "you returned a new list, but the list you were given is unchanged: append to "
            "`messages` itself (the loop keeps using that list)"
        )
    if not unchanged(tool_calls, case.arguments[1]):
        return (
            "the list of tool calls changed (after your function it is "
            f"{show(tool_calls, 80)}): in the loop that list is the one inside the "
            "assistant message, so read it without taking calls out of it (no .pop())"
        )
    if not unchanged(messages[:start], case.arguments[0][:start]):
        return "the messages already in the list changed: only append to it"
    wanted = [[name, arguments] for name, arguments, _ in case.arguments[2]["script"]]
    if len(outcome.invoked) != len(wanted):
        return (
            f"tools.invoke ran {len(outcome.invoked)} time(s) for {len(wanted)} tool call(s): "
            "run each call exactly once"
        )
    if not same(outcome.invoked, wanted):
        return "the tools ran in a different order, or with other arguments, than the calls gave"
    added = messages[start:]
    if len(added) != len(wanted):
        return (
            f"{len(added)} message(s) were appended for {len(wanted)} tool call(s): append one "
            "tool message per call to the list you were given (messages.append(...); "
            "`messages = messages + [...]` makes a new list the loop never sees)"
        )
    for number, (message, wanted_message) in enumerate(zip(added, expected), 1):
        problem = tool_message_problem(message, wanted_message)
        if problem:
            return f"tool message {number}: {problem}"
    return None


# --- Lesson 04: did the repair succeed? ----------------------------------------------------


def check_repair_verdict(repair_succeeded, *, hidden: bool = False) -> None:
    """``repair_succeeded(after, test_hash_before, test_hash_after)`` trusts only the evidence."""
    answer = learner_answer(repair_succeeded, "repair_succeeded")
    tests = (SAMPLE_DIR / TEST_FILE).read_bytes()
    same_hash = hashlib.sha256(tests).hexdigest()
    renamed = hashlib.sha256(tests.replace(b"def test_backslash", b"def backslash")).hexdigest()
    verdicts = [
        (
            "repaired: 4 passed, test file unchanged",
            (0, 4, 0, "4 passed in 0.03s"),
            same_hash,
            "exit code 0, no failures, tests that ran and an unchanged test file: a real repair",
        ),
        (
            "still failing: 1 failed, 3 passed",
            (1, 3, 1, "1 failed, 3 passed in 0.04s"),
            same_hash,
            "a failing test means the repair is not done",
        ),
        (
            "all pass, but the failing test was renamed away",
            (0, 3, 0, "3 passed in 0.03s"),
            renamed,
            "the test file's hash changed: tests edited to pass prove nothing",
        ),
        (
            "no tests ran (exit code 5)",
            (5, 0, 0, "no tests ran in 0.01s"),
            same_hash,
            "pytest exits with 5 when it collected no tests: nothing was checked",
        ),
        (
            "a collection error (exit code 2)",
            (2, 0, 1, "1 error in 0.05s"),
            same_hash,
            "exit code 2: the tests could not even be collected",
        ),
        (
            "every test skipped (exit code 0, 0 passed)",
            (0, 0, 0, "4 skipped in 0.02s"),
            same_hash,
            "exit code 0, but not one test passed: nothing was checked",
        ),
        (
            "4 passed, but pytest exited with 3",
            (3, 4, 0, "4 passed in 0.03s"),
            same_hash,
            "the edited module can end the run badly after the tests (an atexit handler calling "
            "os._exit(3)): the rule is exit code 0, whatever the counts and the text say",
        ),
        (
            "exit code 0, but the counts say 1 failed",
            (0, 3, 1, "3 passed in 0.03s"),
            same_hash,
            "trust no single number: a repair has exit code 0, no failure and tests that passed",
        ),
    ]
    other_sample = _random_hash(random.Random("another copy of the sample"))
    verdicts = [(label, counts, same_hash, after, hint) for label, counts, after, hint in verdicts]
    verdicts.append(
        (
            "a repaired copy of another version of the sample",
            (0, 4, 0, "4 passed in 0.03s"),
            other_sample,
            other_sample,
            "compare the hash after with the hash before, whatever file it was",
        )
    )
    if hidden:
        verdicts.append(
            (
                "interrupted after 4 passed (exit code 2)",
                (2, 4, 0, "4 passed in 0.03s\n!!! KeyboardInterrupt !!!"),
                same_hash,
                same_hash,
                "only exit code 0 is a finished, passing run",
            )
        )
        verdicts.append(
            (
                "hashes that differ only in their last character",
                (0, 4, 0, "4 passed in 0.03s"),
                same_hash,
                same_hash[:-1] + "0" if same_hash[-1] != "0" else same_hash[:-1] + "1",
                "compare the whole hashes: any difference means the file changed",
            )
        )
    seed = _seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        exit_code, passed, failed = (
            draw.choice([0, 0, 1, 2, 3, 5]),
            draw.randrange(0, 6),
            draw.randrange(0, 3),
        )
        output = ", ".join(
            part
            for part in [f"{failed} failed" if failed else "", f"{passed} passed" if passed else ""]
            if part
        )
        if draw.random() < 0.3:  # a run whose text claims success whatever the counts say
            output = "4 passed"
        hash_before = same_hash if draw.random() < 0.5 else _random_hash(draw)
        hash_after = hash_before if draw.random() < 0.7 else _random_hash(draw)
        verdicts.append(
            (
                f"drawn case {number} (seed {seed})",
                (exit_code, passed, failed, f"{output or 'no tests ran'} in 0.02s"),
                hash_before,
                hash_after,
                "",
            )
        )
    cases = []
    for label, (exit_code, passed, failed, output), hash_before, hash_after, hint in verdicts:
        verdict = exit_code == 0 and failed == 0 and passed > 0 and hash_after == hash_before
        shown = (
            f"repair_succeeded(Checks(exit_code={exit_code}, passed={passed}, "
            f"failed={failed}, output={output!r}), {_short_hash(hash_before)}, "
            f"{_short_hash(hash_after)})"
        )
        cases.append(
            Case(
                label,
                [run_counts_value(exit_code, passed, failed, output), hash_before, hash_after],
                verdict,
                shown=shown,
                hint=hint,
            )
        )
    run_cases(answer, cases, _verdict_problem, what="repair_succeeded")


def _short_hash(digest: str) -> str:
    return f"'{digest[:10]}...'"


def _random_hash(draw: random.Random) -> str:
    return "".join(draw.choice("0123456789abcdef") for _ in range(64))


# --- Lesson 05: predict, then check --------------------------------------------------------

#: What the ``max_turns=1`` replay of bounded.json gives (a test runs it and compares).
BOUNDED_TRUTH = {
    "model_requests": 1,
    "tool_calls": 1,
    "stop_reason": "max_turns",
    "final_exit_code": 1,
}
BOUNDED_TYPES = {
    "model_requests": int,
    "tool_calls": int,
    "stop_reason": str,
    "final_exit_code": int,
}
BOUNDED_WHY = {
    "model_requests": "max_turns bounds model requests: with max_turns=1 the loop sends "
    "exactly one",
    "tool_calls": "the tools of the last turn still run: the one request asked for read_file, "
    "and it ran before the budget stopped the loop",
    "stop_reason": "the model never gave a final answer: the budget stopped the run",
    "final_exit_code": "one turn only read a file, nothing was repaired, so the independent "
    "check still fails",
}
#: How each lesson-05 case stops (a test runs each case and compares).
STOP_TRUTH = {
    "no_done": "incomplete_model_turn",
    "length": "incomplete_model_turn",
    "unknown_tool": "assistant_finished",
    "server_down": "model_error",
}
STOP_WHY = {
    "no_done": "Without a `done` chunk the turn is incomplete, so its tool call is never run: "
    "the loop stops with incomplete_model_turn after 0 tool calls.",
    "length": "A reply cut by the length limit may be missing part of a tool call, so the loop "
    "refuses it: incomplete_model_turn, no tool run.",
    "unknown_tool": "An unknown tool is not a crash: it becomes an {'error': ...} result, the "
    "model reads it in the next request and ends with text, so the stop is "
    "assistant_finished.",
    "server_down": "The model call itself raised, so the loop reports model_error with the error "
    "text (what to do about it) and runs nothing.",
}


def check_bounded_prediction(bounded_prediction, *, hidden: bool = False) -> None:
    """Compare the prediction of the ``max_turns=1`` replay of bounded.json with its outcome."""
    prediction = _prediction(bounded_prediction, "bounded_prediction", BOUNDED_TRUTH)
    for field, kind in BOUNDED_TYPES.items():
        value = prediction[field]
        if type(value) is not kind:
            fail(
                f"{field} is {_typed(value)}; write {'an int' if kind is int else 'a str'}",
                hint="True, 1.0 and '1' are not the int 1: the run counts with whole numbers"
                if kind is int
                else "a stop reason is its name in quotes, e.g. 'max_turns'",
            )
    _compare(prediction, BOUNDED_TRUTH, BOUNDED_WHY, "prediction")


def check_stop_predictions(stop_predictions, *, hidden: bool = False) -> None:
    """Compare predicted stop reasons with how each lesson-05 case stops."""
    predictions = _prediction(stop_predictions, "stop_predictions", STOP_TRUTH)
    for name, value in predictions.items():
        if type(value) is not str or value not in STOP_REASON_NAMES:
            fail(
                f"your prediction for {name!r} is {_typed(value)}, which is not a stop reason",
                hint=f"choose one of: {', '.join(STOP_REASON_NAMES)}",
            )
    _compare(predictions, STOP_TRUTH, STOP_WHY, "predictions")


def _prediction(function, name: str, truth: dict) -> dict:
    """Run the learner's prediction function in a fresh process and check the dict's shape."""
    answer = learner_answer(function, name)
    fields = tuple(truth)
    try:
        [outcome] = run_answer(answer.source, answer.name, [[]])
    except AnswerError as exc:
        fail(f"{answer.name}: {exc}")
    if outcome.raised:
        if outcome.raised.type == "NotImplementedError":
            fail(
                f"not answered yet: {answer.name}() still raises NotImplementedError",
                hint="replace the `raise NotImplementedError()` line with `return {...}`, "
                "your prediction, written before you run anything",
            )
        fail(f"{answer.name}() raised {outcome.raised.type}: {outcome.raised.message}")
    prediction = outcome.returned
    if not isinstance(prediction, dict):
        fail(
            f"{answer.name}() should return a dict, but returned {_typed(prediction)}",
            hint=f"return a dict with the keys {', '.join(fields)}",
        )
    missing = [field for field in fields if field not in prediction]
    extra = [key for key in prediction if key not in fields]
    if missing or extra:
        fail(
            f"the prediction needs exactly the keys {', '.join(fields)}"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; not expected: {', '.join(map(repr, extra))}" if extra else "")
        )
    empty = [field for field in fields if prediction[field] is None]
    if empty:
        fail(
            f"not answered yet: the prediction has no value yet for {', '.join(empty)}",
            hint="write down what you think will happen before running anything",
        )
    return prediction


def _compare(prediction: dict, truth: dict, why: dict, what: str) -> None:
    """Print each prediction beside the outcome, explaining every miss."""
    misses = [field for field in truth if not same(prediction[field], truth[field])]
    print(
        "Your " + what + " against the run:"
        if misses
        else f"All {len(truth)} predictions match the run:"
    )
    for field in truth:
        line = f"  {field}: you said {prediction[field]!r}, the run gave {truth[field]!r}"
        print(line + (f". Not quite: {why[field]}" if field in misses else ", right."))
    if misses:
        fail(
            f"{len(misses)} of {len(truth)} predictions differ from the run: {', '.join(misses)}",
            printed=True,
        )


def _typed(value) -> str:
    """A value with its type named, as feedback shows a wrong type."""
    if isinstance(value, Other):
        return f"{value.repr} (a {value.type})"
    if value is None:
        return "None"
    return f"{show(value, 60)} (a {type(value).__name__})"


# --- Hand-written chunks and recorded ones -------------------------------------------------


def _chunk(content="", *, content_none=False, **fields) -> dict:
    """One chunk of an exercise's stream; ``content_none`` sends ``content: None``."""
    made = chunk(content, model="exercise", **fields)
    if content_none:
        made["message"]["content"] = None
    return made


STREAM_KINDS = ("text", "thinking", "call", "no content", "content None")


def _random_stream(
    draw: random.Random,
    *,
    done: bool,
    length: int | None = None,
    text: tuple = (0, 40),
    weights: tuple = (2, 1, 1, 1, 1),
) -> list:
    """A well-formed stream: thinking, text, tool calls and missing content, in any order;
    ``length`` chunks before the final one (a few if not given), ``text`` the range of a
    fragment's length, ``weights`` how often each of ``STREAM_KINDS`` comes."""
    # Three draws for the whole stream, not three per fragment: the linear-time check's
    # streams are tens of thousands of fragments long.
    length = draw.randrange(0, 7) if length is None else length
    kinds = draw.choices(STREAM_KINDS, weights, k=length)
    sizes = draw.choices(range(*text), k=length)
    letters = "".join(draw.choices(TEXT_ALPHABET, k=sum(sizes)))
    chunks, end = [], 0
    for kind, size in zip(kinds, sizes):
        fragment, end = letters[end : end + size], end + size
        if kind == "text":
            chunks.append(_chunk(fragment))
        elif kind == "thinking":
            chunks.append(_chunk(thinking=fragment or "hm"))
        elif kind == "call":
            chunks.append(_chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)], content=None))
        else:
            chunks.append(
                _chunk(
                    content=None if kind == "no content" else "",
                    content_none=kind == "content None",
                )
            )
    if done:
        chunks.append(_chunk(_random_text(draw, *text) if draw.random() < 0.3 else "", done=True))
    return chunks


def describe_stream(chunks) -> str:
    """A stream in words, chunk by chunk; runs of like fragments are counted, not quoted."""
    parts = [_describe_chunk(chunk) for chunk in chunks]
    if len(parts) > 8:
        runs = []
        for part in parts:
            kind = part.split(" ", 1)[0] if part.startswith(("thinking ", "text ")) else part
            if runs and runs[-1][0] == kind:
                runs[-1][1] += 1
            else:
                runs.append([kind, 1, part])
        parts = [
            part if count == 1 else f"{count:,} {kind} fragments" for kind, count, part in runs
        ]
    return "[" + ", ".join(parts) + "]" if parts else "[] (no chunks at all)"


def _describe_chunk(chunk) -> str:
    message = chunk["message"]
    words = []
    if message.get("thinking"):
        words.append(f"thinking {message['thinking']!r}")
    if "content" not in message:
        words.append("no content key")
    elif message["content"] is None:
        words.append("content None")
    elif message["content"]:
        words.append(f"text {message['content']!r}")
    for call in message.get("tool_calls") or []:
        arguments = ", ".join(f"{k}={v!r}" for k, v in call["function"]["arguments"].items())
        words.append(f"tool call {call['function']['name']}({arguments})")
    if chunk.get("done"):
        words.append(f"done ({chunk.get('done_reason')})")
    return " + ".join(words) or "empty"


def _recorded_chunks(name: str, turn: int) -> list:
    """The chunks of one recorded turn, read as plain JSON (no labkit code in between)."""
    recording = json.loads((RECORDINGS_DIR / f"{name}.json").read_text("utf-8"))
    return [entry["chunk"] for entry in recording["turns"][turn - 1]["chunks"]]


# --- Lessons 06 to 08 keep their checks in modules of their own ---------------------------
# (imported last: lesson 06's build on the helpers above)

from .budget_checks import check_compaction, check_head_and_tail  # noqa: E402
from .checks_providers import check_assemble_calls, check_result_messages  # noqa: E402
from .permission_checks import check_gate_stops, check_policy  # noqa: E402

__all__ += [
    "check_assemble_calls",
    "check_result_messages",
    "check_policy",
    "check_gate_stops",
    "check_head_and_tail",
    "check_compaction",
]
