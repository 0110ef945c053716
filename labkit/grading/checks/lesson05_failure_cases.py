"""Lesson 05's checks: predictions, written before running, of how runs stop."""

from __future__ import annotations

from ..feedback import fail
from ..isolated import AnswerError, run_answer, same
from .common import hidden_cases, learner_answer, typed

__all__ = ["check_bounded_prediction", "check_stop_predictions"]

#: The loop's stop reasons, written out (a test holds them equal to the harness's).
STOP_REASON_NAMES = (
    "assistant_finished",
    "empty_response",
    "incomplete_model_turn",
    "malformed_model_turn",
    "model_error",
    "max_turns",
    "tools_failed",
)

#: What the ``max_turns=3`` replay of repair.json gives (a test runs it and compares).
BOUNDED_TRUTH = {
    "model_requests": 3,
    "tool_calls": 3,
    "stop_reason": "max_turns",
    "final_exit_code": 0,
}
BOUNDED_TYPES = {
    "model_requests": int,
    "tool_calls": int,
    "stop_reason": str,
    "final_exit_code": int,
}
BOUNDED_WHY = {
    "model_requests": "max_turns bounds model requests: with max_turns=3 the loop sends "
    "exactly three",
    "tool_calls": "each of the three replies asked for one tool (read_file, read_file, "
    "replace_text), and the last turn's tool still runs before the budget stops the loop",
    "stop_reason": "the model never got to its final answer: the budget stopped the run",
    "final_exit_code": "the third call, replace_text, made the repair before the budget "
    "stopped the run, so the independent check passes: stopping for max_turns says nothing "
    "about the tests either way",
}
#: How each run exercise 5b asks about stops (a test runs each and compares).
STOP_TRUTH = {
    "call_after_done": "malformed_model_turn",
    "answer_cut": "incomplete_model_turn",
    "unknown_tool_last_turn": "max_turns",
    "server_fails_later": "model_error",
}
STOP_WHY = {
    "call_after_done": "Nothing may follow the final chunk: the turn breaks the wire format, "
    "so the run stops with malformed_model_turn and the call never runs.",
    "answer_cut": "A reply cut by the length limit is refused whatever it holds, text only "
    "included: incomplete_model_turn.",
    "unknown_tool_last_turn": "The unknown tool becomes an error result as always, but the "
    "budget of one request is spent: max_turns, with no reply to the error.",
    "server_fails_later": "Whenever the model call raises, the run ends with model_error, "
    "after the tool calls that already ran.",
}


def check_bounded_prediction(bounded_prediction, *, hidden: bool = False) -> None:
    """Compare the prediction of the ``max_turns=3`` replay of repair.json with its outcome."""
    if hidden:
        hidden_cases("check_bounded_prediction")  # none, but a hidden test is the instructor's
    prediction = _prediction(bounded_prediction, "bounded_prediction", BOUNDED_TRUTH)
    for field, kind in BOUNDED_TYPES.items():
        value = prediction[field]
        if type(value) is not kind:
            fail(
                f"{field} is {typed(value)}; write {'an int' if kind is int else 'a str'}",
                hint="True, 1.0 and '1' are not the int 1: the run counts with whole numbers"
                if kind is int
                else "a stop reason is its name in quotes, e.g. 'max_turns'",
            )
    _compare(prediction, BOUNDED_TRUTH, BOUNDED_WHY, "prediction")


def check_stop_predictions(stop_predictions, *, hidden: bool = False) -> None:
    """Compare predicted stop reasons with how each run of exercise 5b stops."""
    if hidden:
        hidden_cases("check_stop_predictions")  # none, but a hidden test is the instructor's
    predictions = _prediction(stop_predictions, "stop_predictions", STOP_TRUTH)
    for name, value in predictions.items():
        if type(value) is not str or value not in STOP_REASON_NAMES:
            fail(
                f"your prediction for {name!r} is {typed(value)}, which is not a stop reason",
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
            f"{answer.name}() should return a dict, but returned {typed(prediction)}",
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
