"""Where a run's time went, from its events' clock times (``time_spans``, ``time_totals``)."""

from labkit import time_spans, time_totals


def ev(kind, t, **fields):
    return {"type": kind, "time": t, **fields}


def test_spans_follow_model_streams_and_tool_runs():
    events = [
        ev("model_start", 0.0),
        ev("text_delta", 0.5),
        ev("tool_start", 1.0),
        ev("tool_result", 1.5),
        ev("tool_start", 1.5),
        ev("tool_result", 3.5),
        ev("model_start", 3.5),
        ev("stopped", 4.0),
    ]
    assert time_spans(events) == [
        ("model", 0.0, 1.0),
        ("tool", 1.0, 1.5),
        ("tool", 1.5, 3.5),
        ("model", 3.5, 4.0),
    ]
    assert time_totals(time_spans(events)) == {"model": 1.5, "tool": 2.5}


def test_a_model_error_closes_the_model_span():
    assert time_spans([ev("model_start", 1.0), ev("stopped", 1.25)]) == [("model", 1.0, 1.25)]
