"""The checks behind the lessons' graded exercises: one function per exercise.

A notebook's test cell calls one of these with the learner's answer. Each tries the
answer on several cases, the tricky ones included, prints what went wrong and why,
and raises ``AssertionError`` on the first miss so that nbgrader scores the cell 0.
The expected values come from the course's own code (``tool_message``,
``assemble_turn``, the loop itself) or are written here by hand.
"""

from __future__ import annotations

import copy
import hashlib
import json

from .cases import BOUNDED_FIELDS, bounded_outcome, failure_cases, run_case
from .feedback import Case, fail, run_cases, show
from .lesson import recording_path
from .loop import STOP_REASONS, call_tool, tool_message
from .recording import load_recording
from .sample import SAMPLE_DIR, SOURCE_FILE, TEST_FILE, Checks, sample_copy
from .tools import RepoTools
from .turns import assemble_turn

__all__ = ["check_tool_message", "check_assemble_content", "check_may_dispatch",
           "check_append_results", "check_repair_verdict", "check_bounded_prediction",
           "check_stop_predictions"]

TOOL_MESSAGE_KEYS = ("role", "tool_name", "content")
FRAGMENTS = 200_000  # a long reply, streamed: linear assembly takes milliseconds, quadratic seconds


# --- Lesson 01: the tool message -----------------------------------------------------------

def check_tool_message(make_tool_message) -> None:
    """``make_tool_message(name, result)`` returns the tool message that carries ``result``."""
    source = (SAMPLE_DIR / SOURCE_FILE).read_text(encoding="utf-8")
    results = [
        ("a replace_text result", "replace_text", {"path": SOURCE_FILE, "replaced": 1}, ""),
        ("the read_file result of lesson 01", "read_file", {"path": SOURCE_FILE, "content": source},
         "file text holds quotes, backslashes and newlines: json.dumps escapes them all"),
        ("a run_tests result with true/false", "run_tests",
         {"exit_code": 1, "timed_out": False, "output": "1 failed, 3 passed in 0.04s"},
         "JSON writes false, Python writes False: only json.dumps gives JSON"),
        ("an error result", "read_file",
         {"error": "path '/etc/passwd' is not allowed; use one of: path_rules.py, "
                   "tests/test_path_rules.py"},
         "an error is a result like any other: the model must be able to read it"),
        ("non-ASCII text", "read_file", {"path": "NOTES.md", "content": "Grüße, naïve café — 東京 ✓"},
         "JSON text can carry any character"),
    ]
    cases = [Case(label, (lambda n=name, r=result: (n, copy.deepcopy(r))),
                  tool_message(name, result), hint=hint)
             for label, name, result, hint in results]
    run_cases(make_tool_message, cases, lambda got, case, _: tool_message_problem(got, case.expected),
              what="make_tool_message")


def tool_message_problem(got, expected: dict) -> str | None:
    """Name what is wrong with a tool message, compared with the course's ``tool_message``."""
    if not isinstance(got, dict):
        return (f"a tool message is a dict, but this is {show(got, 60)}"
                + (": did you forget `return`?" if got is None else ""))
    if "tool_name" not in got and "name" in got:
        return "the tool's name goes under the key 'tool_name' (Ollama's field), not 'name'"
    missing = [key for key in TOOL_MESSAGE_KEYS if key not in got]
    if missing:
        return f"the message has no {', '.join(repr(k) for k in missing)} key"
    extra = sorted(set(got) - set(TOOL_MESSAGE_KEYS), key=str)
    if extra:
        return f"unexpected key(s) {extra}: a tool message has exactly role, tool_name and content"
    if got["role"] != "tool":
        return f"role is {got['role']!r}; it must be exactly 'tool'"
    if got["tool_name"] != expected["tool_name"]:
        return f"tool_name is {got['tool_name']!r}, but the result came from {expected['tool_name']!r}"
    return _content_problem(got["content"], json.loads(expected["content"]))


def _content_problem(content, result) -> str | None:
    if isinstance(content, (dict, list)):
        return ("content is the result object itself, but a message's content is text: "
                "turn the result into JSON text with json.dumps(result)")
    if not isinstance(content, str):
        return f"content is a {type(content).__name__}, not text: use json.dumps(result)"
    try:
        decoded = json.loads(content)
    except ValueError as exc:
        if content in (str(result), repr(result)):
            return ("content is str(result), Python's own notation (single quotes, True, None), "
                    "which is not JSON: use json.dumps(result)")
        return f"content is not valid JSON text ({exc}): use json.dumps(result)"
    if isinstance(decoded, str) and not isinstance(result, str):
        return "content is JSON of a string, not of the result: was json.dumps applied twice?"
    if decoded != result:
        return f"content is JSON, but it decodes to {show(decoded, 120)}, not to the tool's result"
    return None


# --- Lesson 02: assembling a streamed turn -------------------------------------------------

def check_assemble_content(assemble_content) -> None:
    """``assemble_content(chunks)`` returns the assistant text of a stream of chunks."""
    streams = [
        ("three text fragments", lambda: [_chunk("The "), _chunk("tests "), _chunk("pass."),
                                          _chunk(done=True)], ""),
        ("thinking before the text", lambda: [
            _chunk(thinking="The user wants "), _chunk(thinking="a summary."),
            _chunk("Here is "), _chunk("the summary."), _chunk(done=True)],
         "thinking is the model's scratch work: it is not part of the assistant's content"),
        ("text on the final chunk", lambda: [_chunk("Almost"), _chunk(" done.", done=True)],
         "the final (done) chunk can carry text too"),
        ("chunks whose message has no content", lambda: [
            _chunk(thinking="Reading first.", content=None), _chunk("Reading"),
            _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)], content=None),
            _chunk(content_none=True), _chunk(" the file."), _chunk(done=True)],
         "a chunk's message may lack 'content' or hold None: skip it (message.get('content'))"),
        ("a tool call and no text", lambda: [
            _chunk(thinking="I need the file."),
            _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)]), _chunk(done=True)],
         "a turn that only calls a tool has empty content: ''"),
        ("an empty stream", lambda: [], "no chunks, no text: ''"),
        ("the recorded final summary (repair.json, turn 5)", lambda: _recorded_chunks("repair", 5),
         ""),
    ]
    cases = [Case(label, (lambda m=make: (m(),)), assemble_turn(make()).message["content"],
                  shown=f"assemble_content(chunks), chunks: {describe_stream(make())}", hint=hint)
             for label, make, hint in streams]
    cases.append(Case(  # written by hand: building this stream twice more would cost a second
        "200,000 fragments", lambda: (_many_fragments(FRAGMENTS),), "abcd" * FRAGMENTS,
        shown=f"assemble_content(chunks), chunks: [{FRAGMENTS:,} text fragments 'abcd', "
              "done (stop)]",
        hint="collect the fragments in a list and join them once: adding each one to a string "
             "kept in a dict copies the whole text every time"))
    run_cases(assemble_content, cases, _assembled_problem, what="assemble_content",
              error_hints={KeyError: "not every chunk's message has 'content': use "
                                     "chunk['message'].get('content') and skip what is empty",
                           TypeError: "some chunks have content None: skip them before joining"})


def _assembled_problem(got, case, arguments) -> str | None:
    expected = case.expected
    if not isinstance(got, str):
        hint = " (join the fragments: ''.join(parts))" if isinstance(got, list) else ""
        return f"assemble_content should return text (a str), but returned {show(got, 80)}{hint}"
    if got == expected:
        return None
    chunks = case.make()[0]
    thoughts = [c["message"].get("thinking") for c in chunks if c["message"].get("thinking")]
    if any(t in got and t not in expected for t in thoughts):
        return "the thinking text leaked into the content: use only message['content']"
    last = chunks[-1]["message"].get("content") if chunks else None
    if last and got == expected[: len(expected) - len(last)]:
        return "the text on the final (done) chunk is missing"
    return f"the text differs from the assistant's content {_where_differs(got, expected)}"


def check_may_dispatch(may_dispatch) -> None:
    """``may_dispatch(chunks)`` is True only when the turn finished normally."""
    streams = [
        ("a complete tool-call turn (repair.json, turn 1)", lambda: _recorded_chunks("repair", 1),
         "the done chunk arrived with done_reason 'stop': the tool call may run"),
        ("the same turn with its done chunk missing",
         lambda: [c for c in _recorded_chunks("repair", 1) if not c["done"]],
         "the tool call arrived on a done:false chunk, but the stream ended without a done "
         "chunk: the turn is incomplete, so nothing may run"),
        ("a turn cut by the output-length limit", lambda: [
            _chunk(thinking="I will read"), _chunk(tool_calls=[_call("read_file", path=SOURCE_FILE)]),
            _chunk(done=True, done_reason="length")],
         "done_reason 'length' means the server cut the reply: refuse it"),
        ("a complete turn with text and no tool calls",
         lambda: [_chunk("All 4 tests pass."), _chunk(done=True)],
         "may_dispatch asks whether the turn finished normally, not whether it called a tool"),
        ("a stream whose only chunk is the final one", lambda: [_chunk("Done.", done=True)],
         "the done chunk can be the first and only chunk"),
        ("an empty stream", lambda: [], "no done chunk arrived, so the turn is not complete"),
    ]
    cases = [Case(label, (lambda m=make: (m(),)), assemble_turn(make()).may_dispatch,
                  shown=f"may_dispatch(chunks), chunks: {describe_stream(make())}", hint=hint)
             for label, make, hint in streams]
    run_cases(may_dispatch, cases, _verdict_problem, what="may_dispatch",
              error_hints={KeyError: "look keys up with .get(): 'done_reason' is only on the "
                                     "done chunk",
                           IndexError: "a stream can be empty: chunks[-1] does not exist then"})


def _verdict_problem(got, case, arguments) -> str | None:
    if not isinstance(got, bool):
        forgot = ": did you forget `return`?" if got is None else ""
        return f"return True or False, not {show(got, 60)}{forgot}"
    if got != case.expected:
        return f"returned {got}, but the right answer here is {case.expected}"
    return None


# --- Lesson 03: tool results back into the conversation ------------------------------------

def check_append_results(append_tool_results) -> None:
    """``append_tool_results(messages, tool_calls, tools)`` runs each call and appends its result."""
    with sample_copy() as root:
        calls = [
            ("one read_file call", RepoTools, [_call("read_file", path=SOURCE_FILE)], ""),
            ("two calls, in order", RepoTools,
             [_call("read_file", path=SOURCE_FILE), _call("read_file", path=TEST_FILE)],
             "run the calls one after another, in the order the model gave them"),
            ("an unknown tool, then a good call", RepoTools,
             [_call("grep", pattern="PurePosixPath"), _call("read_file", path=TEST_FILE)],
             "an unknown tool raises ValueError: it becomes an error result and the next call "
             "still runs"),
            ("arguments the tool refuses", RepoTools,
             [_call("read_file", path="../../etc/passwd"), _call("read_file", path=7)],
             "a refused call (ValueError, TypeError) becomes {'error': str(exc)}"),
            ("a tool that raises OSError", _FailingDisk, [_call("read_file", path=SOURCE_FILE)],
             "OSError is a tool error too: {'error': str(exc)}"),
            ("no tool calls", RepoTools, [], "nothing to run, nothing to append"),
        ]
        cases = [Case(label, _conversation_maker(root, make_tools, tool_calls),
                      [tool_message(c["function"]["name"],
                                    call_tool(make_tools(root), c["function"]["name"],
                                              c["function"]["arguments"]))
                       for c in tool_calls],
                      shown=f"append_tool_results(messages, {show(tool_calls, 200)}, tools)",
                      hint=hint)
                 for label, make_tools, tool_calls, hint in calls]
        run_cases(append_tool_results, cases, _appended_problem, what="append_tool_results",
                  observe=lambda got, arguments: arguments[0][_APPENDED_FROM:],
                  error_hints={(ValueError, TypeError, OSError):
                               "a tool raised and your function let the error out: catch "
                               "ValueError, TypeError and OSError around tools.invoke and use "
                               "{'error': str(exc)} as the result, so the loop can go on",
                               KeyError: "each call looks like {'function': {'name': ..., "
                                         "'arguments': {...}}}"})


_START = [{"role": "system", "content": "(the system prompt)"},
          {"role": "user", "content": "(the task)"}]
_APPENDED_FROM = len(_START) + 1  # after the start and the assistant message with the calls


def _conversation_maker(root, make_tools, tool_calls):
    def make():
        assistant = {"role": "assistant", "content": "", "tool_calls": copy.deepcopy(tool_calls)}
        return ([*copy.deepcopy(_START), assistant], copy.deepcopy(tool_calls),
                _WatchedTools(make_tools(root)))
    return make


def _appended_problem(got, case, arguments) -> str | None:
    messages, tool_calls, tools = arguments
    start = _APPENDED_FROM
    if isinstance(got, list) and got is not messages and len(messages) == start and case.expected:
        return ("you returned a new list, but the list you were given is unchanged: append to "
                "`messages` itself (the loop keeps using that list)")
    if messages[:start] != case.make()[0]:
        return "the messages already in the list changed: only append to it"
    wanted = [(c["function"]["name"], c["function"]["arguments"]) for c in case.make()[1]]
    if len(tools.invoked) != len(wanted):
        return (f"tools.invoke ran {len(tools.invoked)} time(s) for {len(wanted)} tool call(s): "
                "run each call exactly once")
    if tools.invoked != wanted:
        return "the tools ran in a different order, or with other arguments, than the calls gave"
    added = messages[start:]
    if len(added) != len(wanted):
        return (f"{len(added)} message(s) were appended for {len(wanted)} tool call(s): append one "
                "tool message per call to the list you were given (messages.append(...); "
                "`messages = messages + [...]` makes a new list the loop never sees)")
    for number, (message, expected) in enumerate(zip(added, case.expected), 1):
        problem = tool_message_problem(message, expected)
        if problem:
            return f"tool message {number}: {problem}"
    return None


class _WatchedTools:
    """Wraps a tools object and notes every ``invoke``, to check order and count."""

    def __init__(self, tools):
        self.tools, self.invoked = tools, []
        self.schemas = tools.schemas

    def invoke(self, name, arguments):
        self.invoked.append((name, copy.deepcopy(arguments)))
        return self.tools.invoke(name, arguments)

    def __repr__(self):
        return "tools"


class _FailingDisk:
    """Tools whose every read fails the way a broken disk does."""

    schemas = RepoTools.schemas

    def __init__(self, root):
        self.root = root

    def invoke(self, name, arguments):
        raise OSError(5, "Input/output error", arguments.get("path"))


# --- Lesson 04: did the repair succeed? ----------------------------------------------------

def check_repair_verdict(repair_succeeded) -> None:
    """``repair_succeeded(after, test_hash_before, test_hash_after)`` trusts only the evidence."""
    tests = (SAMPLE_DIR / TEST_FILE).read_bytes()
    same = hashlib.sha256(tests).hexdigest()
    renamed = hashlib.sha256(tests.replace(b"def test_backslash", b"def backslash")).hexdigest()
    verdicts = [
        ("repaired: 4 passed, test file unchanged", Checks(0, 4, 0, "4 passed in 0.03s"), same, True,
         "exit code 0, no failures, tests that ran and an unchanged test file: a real repair"),
        ("still failing: 1 failed, 3 passed", Checks(1, 3, 1, "1 failed, 3 passed in 0.04s"),
         same, False, "a failing test means the repair is not done"),
        ("all pass, but the failing test was renamed away", Checks(0, 3, 0, "3 passed in 0.03s"),
         renamed, False, "the test file's hash changed: tests edited to pass prove nothing"),
        ("no tests ran (exit code 5)", Checks(5, 0, 0, "no tests ran in 0.01s"), same, False,
         "pytest exits with 5 when it collected no tests: nothing was checked"),
        ("a collection error (exit code 2)", Checks(2, 0, 1, "1 error in 0.05s"), same, False,
         "exit code 2: the tests could not even be collected"),
        ("every test skipped (exit code 0, 0 passed)", Checks(0, 0, 0, "4 skipped in 0.02s"), same,
         False, "exit code 0, but not one test passed: nothing was checked"),
    ]
    cases = [Case(label, (lambda a=after, b=same, h=hash_after: (a, b, h)), verdict,
                  shown=f"repair_succeeded({after!r}, {_short_hash(same)}, {_short_hash(hash_after)})",
                  hint=hint)
             for label, after, hash_after, verdict, hint in verdicts]
    run_cases(repair_succeeded, cases, _verdict_problem, what="repair_succeeded")


def _short_hash(digest: str) -> str:
    return f"'{digest[:10]}...'"


# --- Lesson 05: predict, then check --------------------------------------------------------

def check_bounded_prediction(prediction) -> None:
    """Compare a prediction of the ``max_turns=1`` replay of bounded.json with the real run."""
    _check_prediction_shape(prediction, BOUNDED_FIELDS, "prediction")
    truth = bounded_outcome()
    why = {
        "model_requests": "max_turns bounds model requests: with max_turns=1 the loop sends "
                          "exactly one",
        "tool_calls": "the tools of the last turn still run: the one request asked for "
                      "read_file, and it ran before the budget stopped the loop",
        "stop_reason": "the model never gave a final answer: the budget stopped the run",
        "final_exit_code": "one turn only read a file, nothing was repaired, so the independent "
                           "check still fails",
    }
    _compare(prediction, truth, why, "prediction")


def check_stop_predictions(predictions) -> None:
    """Compare predicted stop reasons with the stop of each lesson-05 case, run for real."""
    cases = failure_cases()
    _check_prediction_shape(predictions, tuple(cases), "predictions")
    for name, value in predictions.items():
        if value not in STOP_REASONS:
            fail(f"predictions[{name!r}] is {value!r}, which is not a stop reason",
                 hint=f"choose one of: {', '.join(STOP_REASONS)}")
    truth = {name: run_case(case)[-1]["reason"] for name, case in cases.items()}
    _compare(predictions, truth, {name: case.why for name, case in cases.items()}, "predictions")


def _check_prediction_shape(prediction, fields, what) -> None:
    if not isinstance(prediction, dict):
        fail(f"{what} should be a dict, but it is {show(prediction, 80)}",
             hint=f"write a dict with the keys {', '.join(fields)}")
    missing = [field for field in fields if field not in prediction]
    extra = [key for key in prediction if key not in fields]
    if missing or extra:
        fail(f"{what} needs exactly the keys {', '.join(fields)}"
             + (f"; missing: {', '.join(missing)}" if missing else "")
             + (f"; not expected: {', '.join(map(repr, extra))}" if extra else ""))
    empty = [field for field in fields if prediction[field] is None or prediction[field] == ...]
    if empty:
        fail(f"{what} has no value yet for {', '.join(empty)}",
             hint="write down what you think will happen before running anything")


def _compare(prediction: dict, truth: dict, why: dict, what: str) -> None:
    """Print each prediction beside what the run gave, explaining every miss."""
    misses = [field for field in truth if prediction[field] != truth[field]]
    print("Your " + what + " against the run:" if misses else
          f"All {len(truth)} predictions match the run:")
    for field in truth:
        line = f"  {field}: you said {prediction[field]!r}, the run gave {truth[field]!r}"
        print(line + (f". Not quite: {why[field]}" if field in misses else ", right."))
    if misses:
        fail(f"{len(misses)} of {len(truth)} predictions differ from the run: "
             f"{', '.join(misses)}", printed=True)


# --- Hand-written chunks and recorded ones -------------------------------------------------

def _chunk(content="", *, thinking=None, tool_calls=None, done=False, done_reason="stop",
           content_none=False) -> dict:
    """One Ollama chat chunk. ``content=None`` leaves the key out; ``content_none`` sends None."""
    message = {"role": "assistant"}
    if content is not None:
        message["content"] = None if content_none else content
    if thinking is not None:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    chunk = {"model": "exercise", "created_at": "2026-12-01T09:00:00Z", "message": message,
             "done": done}
    if done:
        chunk["done_reason"] = done_reason
    return chunk


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
        parts = [part if count == 1 else f"{count:,} {kind} fragments"
                 for kind, count, part in runs]
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


def _call(name, **arguments) -> dict:
    return {"function": {"name": name, "arguments": arguments}}


def _recorded_chunks(name: str, turn: int) -> list:
    recording = load_recording(recording_path(f"{name}.json"))
    return [entry["chunk"] for entry in recording["turns"][turn - 1]["chunks"]]


def _many_fragments(count: int) -> list:
    chunks = [{"message": {"role": "assistant", "content": "abcd"}, "done": False}
              for _ in range(count)]
    chunks.append({"message": {"role": "assistant", "content": ""}, "done": True,
                   "done_reason": "stop"})
    return chunks


def _where_differs(got: str, expected: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b),
              min(len(got), len(expected)))
    return (f"from character {at}: yours has {got[at:at + 30]!r}, "
            f"the stream's has {expected[at:at + 30]!r}")
