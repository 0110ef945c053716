"""A batch's results (lesson 14): one row per attempt, the file that keeps them, and the summary.

A row says what happened, never what the model said about it:

    {"task": "off_by_one", "kind": "an off-by-one", "stop": "assistant_finished",
     "detail": "...", "tests_after": {"exit_code": 0, "passed": 4, "failed": 0},
     "tests_unchanged": true, "turns": 6, "tool_calls": 6, "prompt_tokens": 5210,
     "seconds": 2.4, "resumed": 0, "final_text": "page_count() now rounds up ..."}

``stop`` is the loop's stop reason, or one of :data:`ATTEMPT_STOPS` when the attempt itself
failed (its process crashed, ran past its time, or its worker died): then ``tests_after`` is
None. ``final_text`` is the model's last text, what it *claims*; whether the task is resolved
is for the independent test run after the attempt to say (:func:`resolved`), and the summary
counts both, side by side. Pure, apart from reading and writing the file.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..harness.atomic import write_atomically
from ..harness.contracts import STOP_REASONS

#: How an attempt ends when it has no stop of the loop's, and why.
ATTEMPT_STOPS = {
    "attempt_failed": "the attempt's process crashed or raised before the run ended",
    "attempt_timeout": "the attempt ran past its time and was stopped (its journal keeps what "
    "it did: run the batch again to go on)",
    "worker_died": "the worker process running the attempt died",
}
FINAL_TEXT = 500  # characters of the model's last text a row keeps
#: Keys a reported token count goes by, in each wire format's final chunk or event.
TOKEN_KEYS = ("prompt_eval_count", "prompt_tokens", "input_tokens", "promptTokenCount")


def result_row(task, recording: dict, seconds: float) -> dict:
    """The row of a finished attempt at ``task``, from its recording."""
    stop = recording["events"][-1]
    final = next(
        (e for e in reversed(recording["events"]) if e["type"] == "text_delta"), None
    )  # the last turn that said anything
    text = "".join(
        e["text"]
        for e in recording["events"]
        if e["type"] == "text_delta" and final is not None and e["turn"] == final["turn"]
    )
    hashes = recording["test_file_sha256"]
    return {
        "task": task.name,
        "kind": task.kind,
        "stop": stop["reason"],
        "detail": stop["detail"],
        "tests_after": dict(recording["checks"]["after"]),
        "tests_unchanged": hashes["before"] == hashes["after"],
        "turns": stop["turns"],
        "tool_calls": stop["tool_calls"],
        "prompt_tokens": prompt_tokens(recording),
        "seconds": round(seconds, 3),
        "resumed": len(recording.get("resumed", [])),
        "final_text": text[:FINAL_TEXT],
    }


def failed_row(task, stop: str, detail: str) -> dict:
    """The row of an attempt that ended without a stop of the loop's."""
    if stop not in ATTEMPT_STOPS:
        raise ValueError(f"an attempt that failed stops as one of {sorted(ATTEMPT_STOPS)}")
    return {"task": task.name, "kind": task.kind, "stop": stop, "detail": detail,
            "tests_after": None, "tests_unchanged": None, "turns": None, "tool_calls": None,
            "prompt_tokens": None, "seconds": None, "resumed": 0, "final_text": ""}  # fmt: skip


def finished(row: dict | None) -> bool:
    """Whether a row is of an attempt that ran to a stop of the loop's (a batch skips it)."""
    return row is not None and row["stop"] in STOP_REASONS


def prompt_tokens(recording: dict) -> int | None:
    """The prompt tokens a server reported for the attempt's requests, summed (None: it
    reported none; a script's estimate counts, and its provenance says it is one)."""
    counts = [_reported(turn["chunks"]) for turn in recording["turns"]]
    known = [count for count in counts if count is not None]
    return sum(known) if known else None


def _reported(chunks: list) -> int | None:
    """The largest token count any chunk of one reply reports under a :data:`TOKEN_KEYS` key."""
    found, pending = [], [entry["chunk"] for entry in chunks]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key in TOKEN_KEYS and isinstance(item, int) and not isinstance(item, bool):
                    found.append(item)
                elif isinstance(item, dict | list):
                    pending.append(item)
        elif isinstance(value, list):
            pending.extend(value)
    return max(found) if found else None


def resolved(row: dict) -> bool:
    """The task is resolved: the independent test run after the attempt passed (exit code 0,
    tests ran, none failed) and the test file is the one the task shipped."""
    after = row.get("tests_after")
    return bool(
        after
        and after["exit_code"] == 0
        and after["failed"] == 0
        and after["passed"] > 0
        and row.get("tests_unchanged") is True
    )


def summary(rows: list[dict]) -> dict:
    """What a batch did, counted: resolved by the tests, against finished by the model."""
    count = len(rows)
    stops = Counter(row["stop"] for row in rows)
    done = [row for row in rows if finished(row)]
    return {
        "attempts": count,
        "resolved": sum(resolved(row) for row in rows),
        "assistant_finished": stops["assistant_finished"],
        "finished_but_unresolved": sum(
            row["stop"] == "assistant_finished" and not resolved(row) for row in rows
        ),
        "resolved_without_finishing": sum(
            resolved(row) and row["stop"] != "assistant_finished" for row in rows
        ),
        "stops": dict(sorted(stops.items())),
        "turns": sum(row["turns"] for row in done),
        "tool_calls": sum(row["tool_calls"] for row in done),
        "prompt_tokens": sum(row["prompt_tokens"] or 0 for row in done),
    }


def summary_lines(counts: dict) -> list[str]:
    """The summary in a few lines, for a person."""
    total = counts["attempts"] or 1
    return [
        f"resolved (the tests after the attempt pass): {counts['resolved']} of "
        f"{counts['attempts']} ({counts['resolved'] / total:.0%})",
        f"assistant_finished (the model said it was done): {counts['assistant_finished']} of "
        f"{counts['attempts']} ({counts['assistant_finished'] / total:.0%}), "
        f"{counts['finished_but_unresolved']} of them unresolved",
        f"resolved without a final message: {counts['resolved_without_finishing']}",
        "stops: " + ", ".join(f"{stop} {n}" for stop, n in counts["stops"].items()),
    ]


def read_results(path: str | Path) -> dict[str, dict]:
    """The rows a results file holds, by task (none if there is no file yet)."""
    path = Path(path)
    if not path.exists():
        return {}
    rows = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
        except ValueError:
            raise ValueError(f"{path}: line {number} is not JSON; move the file aside") from None
        if not isinstance(row, dict) or not isinstance(row.get("task"), str):
            raise ValueError(f"{path}: line {number} is not a row of results")
        rows[row["task"]] = row
    return rows


def write_results(path: str | Path, rows: list[dict]) -> None:
    """Replace the results file by ``rows``, one JSON line each, whole or not at all."""
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    write_atomically(Path(path), text.encode("utf-8"), mode=0o644)
