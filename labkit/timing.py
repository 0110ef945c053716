"""Where a run's time went, from the loop's event timestamps (pure: no clock of its own)."""

from __future__ import annotations


def time_spans(events) -> list:
    """``(kind, start, end)`` for each model stream and each tool run, in order.

    A model span runs from ``model_start`` to the first event after the stream
    (a ``tool_start`` or ``stopped``); a tool span from ``tool_start`` to its
    ``tool_result``.
    """
    spans, opened = [], None
    for event in events:
        kind = event["type"]
        if kind == "model_start":
            opened = ("model", event["time"])
        elif kind in ("tool_start", "stopped") and opened and opened[0] == "model":
            spans.append(("model", opened[1], event["time"]))
            opened = None
        if kind == "tool_start":
            opened = ("tool", event["time"])
        elif kind == "tool_result" and opened and opened[0] == "tool":
            spans.append(("tool", opened[1], event["time"]))
            opened = None
    return spans


def totals(spans) -> dict:
    """Seconds spent per kind of span."""
    result = {}
    for kind, start, end in spans:
        result[kind] = result.get(kind, 0.0) + end - start
    return result
