"""The exercise checks pass right answers and fail stubs and wrong answers, saying why."""

import pytest

from answers import ANSWER_NAMES, RIGHT, WRONG
from labkit import exercises
from labkit.cases import bounded_outcome, failure_cases, run_case
from labkit.exercises import describe_stream
from labkit.feedback import STUB_ADVICE, CheckFailed
from labkit.sample import SAMPLE_DIR, TEST_FILE

CHECKS = sorted(ANSWER_NAMES)
FUNCTION_CHECKS = [c for c in CHECKS if "prediction" not in c]
STUB_PREDICTIONS = {
    "check_bounded_prediction": dict.fromkeys(
        ["model_requests", "tool_calls", "stop_reason", "final_exit_code"]),
    "check_stop_predictions": dict.fromkeys(["no_done", "length", "unknown_tool", "server_down"]),
}


def answer(source, check):
    namespace = {}
    exec(source.replace("$name", ANSWER_NAMES[check]), namespace)
    return namespace[ANSWER_NAMES[check]]


def run_check(check, learner_answer, capsys):
    """Run a check; return (passed, everything it printed plus the assertion's message)."""
    try:
        getattr(exercises, check)(learner_answer)
    except AssertionError as exc:
        return False, capsys.readouterr().out + str(exc)
    return True, capsys.readouterr().out


def test_every_check_is_exported_and_has_answers():
    assert sorted(exercises.__all__) == CHECKS == sorted(RIGHT) == sorted(WRONG)


@pytest.mark.parametrize("check", CHECKS)
def test_a_right_answer_passes_and_says_so(check, capsys):
    passed, printed = run_check(check, answer(RIGHT[check], check), capsys)
    assert passed, printed
    assert "All " in printed and ("cases passed" in printed or "predictions match" in printed)


@pytest.mark.parametrize("check", FUNCTION_CHECKS)
def test_the_unanswered_stub_fails_with_advice(check, capsys):
    def stub(*arguments):
        raise NotImplementedError()

    passed, printed = run_check(check, stub, capsys)
    assert not passed
    assert f"raised NotImplementedError: {STUB_ADVICE}" in printed


@pytest.mark.parametrize("check", sorted(STUB_PREDICTIONS))
def test_an_unfilled_prediction_fails_with_advice(check, capsys):
    passed, printed = run_check(check, dict(STUB_PREDICTIONS[check]), capsys)
    assert not passed
    assert "no value yet" in printed


@pytest.mark.parametrize("check, wrong", [(c, w) for c in CHECKS for w in WRONG[c]],
                         ids=lambda value: getattr(value, "mistake", value))
def test_a_wrong_answer_fails_and_the_feedback_names_the_mistake(check, wrong, capsys):
    passed, printed = run_check(check, answer(wrong.source, check), capsys)
    assert not passed
    assert wrong.names in printed


def test_the_feedback_shows_the_learners_own_failing_line(capsys):
    def assemble_content(chunks):
        return "".join(chunk["message"]["content"] for chunk in chunks)

    passed, printed = run_check("check_assemble_content", assemble_content, capsys)
    assert not passed
    assert "raised KeyError: 'content'" in printed
    assert '(at `return "".join(chunk["message"]["content"] for chunk in chunks)`)' in printed
    assert "tried:" in printed and "expected: 'Reading the file.'" in printed


def test_a_check_given_something_other_than_a_function_explains(capsys):
    passed, printed = run_check("check_tool_message", None, capsys)
    assert not passed and "should be a function" in printed


def test_a_failure_shows_in_a_notebook_as_one_line_not_a_traceback():
    assert issubclass(CheckFailed, AssertionError)
    assert CheckFailed("case 2: why")._render_traceback_() == [
        "\x1b[31mAssertionError\x1b[39m: case 2: why"]


def test_a_stop_prediction_that_is_not_a_stop_reason_is_named(capsys):
    predictions = {"no_done": "crash", "length": "incomplete_model_turn",
                   "unknown_tool": "assistant_finished", "server_down": "model_error"}
    passed, printed = run_check("check_stop_predictions", predictions, capsys)
    assert not passed and "'crash', which is not a stop reason" in printed


def test_a_prediction_with_wrong_keys_is_named(capsys):
    passed, printed = run_check("check_bounded_prediction", {"turns": 1}, capsys)
    assert not passed
    assert "missing: model_requests" in printed and "not expected: 'turns'" in printed


def test_the_renamed_test_case_really_changes_the_test_file():
    assert b"def test_backslash" in (SAMPLE_DIR / TEST_FILE).read_bytes()


def test_the_bounded_replay_gives_what_the_course_says():
    assert bounded_outcome() == {"model_requests": 1, "tool_calls": 1,
                                 "stop_reason": "max_turns", "final_exit_code": 1}


def test_each_failure_case_stops_as_the_lesson_explains():
    stops = {}
    for name, case in failure_cases().items():
        events = run_case(case)
        stops[name] = (events[-1]["reason"], events[-1]["tool_calls"])
        assert events[-1]["reason"] in case.why
    assert stops == {"no_done": ("incomplete_model_turn", 0),
                     "length": ("incomplete_model_turn", 0),
                     "unknown_tool": ("assistant_finished", 1),
                     "server_down": ("model_error", 0)}


def test_an_unknown_tool_becomes_an_error_result_the_model_reads():
    events = run_case(failure_cases()["unknown_tool"])
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert "unknown tool 'grep'" in result["error"]


def test_a_stream_is_described_chunk_by_chunk_and_long_runs_are_counted():
    short = [{"message": {"role": "assistant", "thinking": "hm", "content": ""}, "done": False},
             {"message": {"role": "assistant"}, "done": False},
             {"message": {"role": "assistant", "content": None,
                          "tool_calls": [{"function": {"name": "run_tests", "arguments": {}}}]},
              "done": False},
             {"message": {"role": "assistant", "content": "ok"}, "done": True,
              "done_reason": "length"}]
    assert describe_stream(short) == ("[thinking 'hm', no content key, content None + tool call "
                                      "run_tests(), text 'ok' + done (length)]")
    many = [{"message": {"role": "assistant", "content": "ab"}, "done": False}] * 9
    assert describe_stream(many) == "[9 text fragments]"
    assert describe_stream([]) == "[] (no chunks at all)"
