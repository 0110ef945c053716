"""How the linear-time check reads its measurements: only growth counts, a growth just over
the limit is measured again before it fails, and one far over it fails at once.

The timings here are given, not measured (``time_answer`` is replaced), so each rule is
tested exactly; test_exercises.py times real answers, right and quadratic."""

import pytest

from labkit.grading import feedback
from labkit.grading.feedback import MAX_GROWTH, MEASUREMENTS, Answer, CheckFailed, check_linear_time

INPUTS = {100: [["a"]], 2400: [["b"]]}
REFERENCE = ("def f(x):\n    return x\n", "f")


def measured(monkeypatch, answer_growths, reference_growth=24.0):
    """Make the answer's successive measurements grow as listed, the reference's as given;
    return the list of who was timed, in order."""
    timed, growths = [], iter(answer_growths)

    def time_answer(source, name, inputs, *, min_seconds=0.0):
        mine = name == "mine"
        timed.append("answer" if mine else "reference")
        growth = next(growths) if mine else reference_growth
        return {100: (0.001, [inputs[100][0][0]]), 2400: (0.001 * growth, [inputs[2400][0][0]])}

    monkeypatch.setattr(feedback, "time_answer", time_answer)
    return timed


def check():
    check_linear_time(
        Answer("", "mine"),
        REFERENCE,
        INPUTS,
        lambda arguments: arguments[0],
        what="streams",
        unit="fragments",
        hint="join once",
    )


def test_a_growth_within_the_limit_passes_after_one_measurement(monkeypatch, capsys):
    timed = measured(monkeypatch, [MAX_GROWTH * 24.0])
    check()
    assert timed == ["answer", "reference"] and "Linear:" in capsys.readouterr().out


def test_a_growth_just_over_the_limit_is_measured_again_and_passes_if_it_was_a_burst(monkeypatch):
    timed = measured(monkeypatch, [MAX_GROWTH * 24.0 * 1.05, 26.0])
    check()
    assert timed == ["answer", "reference"] * 2


def test_a_growth_over_the_limit_every_time_fails_with_the_closest_figures(monkeypatch, capsys):
    timed = measured(monkeypatch, [60.0, 55.0, 58.0])
    with pytest.raises(CheckFailed, match="took 55x as long on the longer one, a linear one 24x"):
        check()
    assert timed == ["answer", "reference"] * MEASUREMENTS
    assert "grows faster than the input" in capsys.readouterr().out


def test_a_growth_far_over_the_limit_fails_after_one_measurement(monkeypatch):
    timed = measured(monkeypatch, [24.0 * 2 * MAX_GROWTH * 1.01])
    with pytest.raises(CheckFailed):
        check()
    assert timed == ["answer", "reference"]
