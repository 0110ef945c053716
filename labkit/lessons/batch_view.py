"""Lesson 14's views: a batch's rows as a table, a journal in a few lines, a loop's run in one.

Pure functions make the text and the HTML; :class:`ResultsTable` shows a batch's rows as an
HTML table in a notebook and as text elsewhere. Times are left out of both: they differ from
run to run (the lesson draws them as a chart instead).
"""

from __future__ import annotations

import html
from collections import Counter

from ..batch.results import resolved

COLUMNS = ("task", "kind", "stop", "tests after", "resolved", "turns", "calls", "tokens", "said")


def row_cells(row: dict) -> list[str]:
    """One row's cells, as the table shows them."""
    after = row["tests_after"]
    tests = f"{after['passed']} passed, {after['failed']} failed" if after else "-"
    said = row["final_text"].replace("\n", " ")
    return [
        row["task"],
        row["kind"],
        row["stop"],
        tests,
        "yes" if resolved(row) else "no",
        "-" if row["turns"] is None else str(row["turns"]),
        "-" if row["tool_calls"] is None else str(row["tool_calls"]),
        "-" if row["prompt_tokens"] is None else f"{row['prompt_tokens']:,}",
        said if len(said) <= 60 else said[:57] + "...",
    ]


def results_text(rows: list[dict]) -> str:
    cells = [list(COLUMNS)] + [row_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1]
        for line in cells
    ).rstrip()


def results_html(rows: list[dict]) -> str:
    head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for row in rows:
        colour = "#e6f4ea" if resolved(row) else "#fce8e6"
        cells = "".join(f"<td>{html.escape(cell)}</td>" for cell in row_cells(row))
        body.append(f"<tr style='background:{colour}'>{cells}</tr>")
    return (
        "<table class='labkit-results'><thead><tr>" + head + "</tr></thead><tbody>"
        + "".join(body) + "</tbody></table>"
    )  # fmt: skip


class ResultsTable:
    """A batch's rows: a table in a notebook (resolved rows green), text elsewhere."""

    def __init__(self, rows: list[dict]):
        self.rows = list(rows)

    def _repr_html_(self) -> str:
        return results_html(self.rows)

    def __repr__(self) -> str:
        return results_text(self.rows)


def journal_lines(entries: list[dict]) -> list[str]:
    """A journal in a few lines: its start, then per request the chunks that arrived and the
    calls that followed, each pick-up, and the end."""
    lines, chunks, events = [], 0, Counter()

    def flush():
        if chunks or events:
            done = ", ".join(f"{n} {kind}" for kind, n in events.items())
            lines[-1] += f": {chunks} chunks" + (f", then {done}" if done else "")

    for entry in entries:
        kind = entry["kind"]
        if kind == "begin":
            lines.append(
                f"line 1: begin {entry['task_name']}, checked before: {entry['checks_before']}"
            )
        elif kind == "request":
            flush()
            chunks, events = 0, Counter()
            lines.append(f"line {entry['n'] + 1}: request {entry['turn']}")
        elif kind == "chunk":
            chunks += 1
        elif kind == "event" and entry["event"]["type"] in ("tool_start", "tool_result", "stopped"):
            events[entry["event"]["type"]] += 1
        elif kind in ("resumed", "end"):
            flush()
            chunks, events = 0, Counter()
            what = f"resumed after turn {entry['turns']}" if kind == "resumed" else "end"
            lines.append(f"line {entry['n'] + 1}: {what}")
    flush()
    return lines


def run_line(events: list[dict]) -> str:
    """A run in one line: its stop, its requests and its calls."""
    stop = events[-1]
    calls = [e["name"] for e in events if e.get("type") == "tool_start"]
    return (
        f"{stop['reason']} after {stop['turns']} requests and {stop['tool_calls']} calls "
        f"({', '.join(calls) or 'none'})"
    )
