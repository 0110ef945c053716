"""Lesson 10's views, as pure functions of a run's events: the plan at each ``todo`` update,
and the run's timeline with each subagent's run nested inside the call that started it.

``plan_html`` / ``plan_text`` draw one plan; ``timeline_lines`` and ``timeline_html`` draw a
run, a child's run indented (text) or folded in a ``<details>`` the reader opens (HTML, so
it opens where a notebook is shown without a kernel too). ``ground_widgets.PlanStepper``
steps through the plans.
"""

from __future__ import annotations

import json
from html import escape

from ..harness.words import counted

MARKS = {"done": "[x]", "in_progress": "[>]", "pending": "[ ]"}
COLOURS = {"done": "#2e7d32", "in_progress": "#1565c0", "pending": "#757575"}


def plan_text(plan: list[dict]) -> str:
    """A plan as lines: ``[x] done``, ``[>] in progress``, ``[ ] pending``."""
    return "\n".join(f"{MARKS[item['status']]} {item['task']}" for item in plan) or "(empty)"


def plan_html(plan: list[dict], caption: str = "") -> str:
    """A plan as an HTML list, each item marked and coloured by its state."""
    items = "".join(
        f'<li style="color:{COLOURS[item["status"]]}"><code>{MARKS[item["status"]]}</code> '
        f"{escape(item['task'])} <small>({item['status'].replace('_', ' ')})</small></li>"
        for item in plan
    )
    head = f"<div><b>{escape(caption)}</b></div>" if caption else ""
    return f'<div class="labkit-plan">{head}<ul style="list-style:none">{items}</ul></div>'


def _call_line(event: dict) -> str:
    arguments = json.dumps(event["arguments"], ensure_ascii=False)
    return f"turn {event['turn']}: {event['name']} {arguments[:70]}"


def _result_line(event: dict) -> str:
    result = event["result"]
    if "error" in result:
        return f"    -> error: {result['error'][:90]}"
    if event["name"] == "delegate":
        return (
            f"    -> one result: {result['stop_reason']}, {counted(result['turns'], 'request')}, "
            f"{counted(result['tool_calls'], 'call')}; answer "
            f"{counted(len(result['answer']), 'character')}"
        )
    return f"    -> {json.dumps(result, ensure_ascii=False)[:80]}"


def timeline_lines(events: list, indent: str = "") -> list[str]:
    """A run's calls and results, one line each, a child's run indented under its call."""
    lines = []
    for event in events:
        kind = event["type"]
        if kind == "tool_start":
            lines.append(indent + _call_line(event))
        elif kind == "subagent":
            lines.append(f"{indent}    subagent (depth {event['depth']}): {event['task'][:60]}...")
            lines += timeline_lines(event["events"], indent + "    |   ")
        elif kind == "tool_result":
            lines.append(indent + _result_line(event))
        elif kind == "stopped":
            lines.append(
                f"{indent}stopped: {event['reason']} after {counted(event['turns'], 'request')}"
            )
    return lines


def timeline_html(events: list) -> str:
    """A run's timeline as HTML: each subagent's run folded under its call, opened on click."""
    parts = []
    for event in events:
        kind = event["type"]
        if kind == "tool_start":
            parts.append(f"<div>{escape(_call_line(event))}</div>")
        elif kind == "subagent":
            inner = timeline_html(event["events"])
            summary = f"subagent (depth {event['depth']}): {event['task'][:80]}"
            parts.append(
                f'<details class="labkit-subagent" style="margin-left:2em">'
                f"<summary>{escape(summary)}</summary>{inner}</details>"
            )
        elif kind == "tool_result":
            parts.append(
                f'<div style="margin-left:2em">{escape(_result_line(event).strip())}</div>'
            )
        elif kind == "stopped":
            parts.append(f"<div><b>stopped: {escape(event['reason'])}</b></div>")
    return '<div class="labkit-timeline" style="font-family:monospace">' + "".join(parts) + "</div>"


class Timeline:
    """A run's timeline as a notebook shows it: HTML with each subagent folded (click to
    open), or the indented text lines where there is no HTML."""

    def __init__(self, events: list):
        self.events = events

    def _repr_html_(self) -> str:
        return timeline_html(self.events)

    def __repr__(self) -> str:
        return "\n".join(timeline_lines(self.events))
