"""A batch: one loop over a task set, attempt by attempt on workers, scored by the tests.

``run_batch`` gives each task of a task set (``harness/taskset.py``) one attempt, each a job
of the course's engine (``labkit/engine.py``, the same one that grades a class): on this
machine's cores by default, or, with ``scheduler="tcp://host:port"``, on a Dask cluster. Each
attempt is isolated: its own copy of the repository, its own process (``job.py``), and lesson
12's sandbox around its tools and checks when the sandbox can start here. Everything lands
in one folder::

    OUT/results.jsonl                  one row per task (``results.py``), rewritten whole
                                       as each attempt ends
    OUT/attempts/<task>/journal.jsonl  the attempt's journal, and beside it its copy of the
    OUT/attempts/<task>/recording.json repository and, once it has ended, its recording

A batch run again skips the tasks whose row says the attempt finished, picks up the others
from their journals (an attempt killed mid-way goes on from its last complete turn), and
starts the rest; ``redo`` starts the named ones afresh. On a cluster of several machines,
``OUT`` must be a folder every worker can reach (the attempts write there); the rows come
back to this process, which alone writes the results file.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..engine import run_jobs
from ..harness.loop import MAX_TURNS, positive_int
from ..harness.sandbox import Sandbox, SandboxUnavailable
from ..harness.taskset import TASKS_DIR, load_tasks
from ..settings import RECORDINGS_DIR
from .job import attempt_job
from .results import failed_row, finished, read_results, write_results

RESULTS = "results.jsonl"
ATTEMPTS = "attempts"
ATTEMPT_TIMEOUT = 900.0  # seconds one attempt may take, checks included
SANDBOX_PROFILE = "workspace-write"
#: The course's scripted attempts at its task set, one recording per task.
TASK_RECORDINGS = RECORDINGS_DIR / "tasks"


@dataclass(frozen=True)
class Batch:
    """A batch's outcome: every task's row (in the task set's order), the tasks it skipped
    as finished before, and the sandbox the attempts ran in (or why none)."""

    rows: list[dict]
    skipped: list[str]
    sandbox: str


def run_batch(
    out: str | Path,
    *,
    taskset: str | Path = TASKS_DIR,
    model: dict | None = None,
    only: list[str] | None = None,
    redo: bool = False,
    workers: int | None = None,
    scheduler: str | None = None,
    max_turns: int = MAX_TURNS,
    sandbox: str | None = "auto",
    timeout: float = ATTEMPT_TIMEOUT,
    progress: bool = False,
    on_row: Callable[[dict], None] | None = None,
) -> Batch:
    """One attempt per task of ``taskset`` (or of the ones ``only`` names), into ``out``.

    ``model``: ``{"replay": FOLDER}`` replays each task's recording from FOLDER (default: the
    course's scripted attempts), ``{"provider": ..., ...}`` a live model (see
    ``attempt_process.py``). ``sandbox``: a profile's name, None for none, ``"auto"`` for
    lesson 12's workspace-write where it can start here. ``on_row(row)`` hears each row as
    its attempt ends; ``progress`` shows a bar with the counts and an estimate of the time
    left."""
    tasks = load_tasks(taskset)
    unknown = sorted(set(only or []) - set(tasks))
    if unknown:
        raise ValueError(f"no task named {', '.join(unknown)} in {taskset}; the tasks: "
                         f"{', '.join(tasks)}")  # fmt: skip
    names = [name for name in tasks if not only or name in only]
    out = Path(out).resolve()
    (out / ATTEMPTS).mkdir(parents=True, exist_ok=True)
    rows = read_results(out / RESULTS)
    if redo:
        for name in names:
            shutil.rmtree(out / ATTEMPTS / name, ignore_errors=True)
            rows.pop(name, None)
    skipped = [name for name in names if finished(rows.get(name))]
    profile, sandbox_note = _sandbox(sandbox)
    base = {
        "taskset": str(Path(taskset).resolve()),
        "model": model or {"replay": str(TASK_RECORDINGS)},
        "max_turns": positive_int(max_turns, "max_turns"),
        "sandbox": profile,
        "timeout": timeout,
    }
    jobs = {
        name: ({**base, "task": name, "folder": str(out / ATTEMPTS / name)},)
        for name in names
        if name not in skipped
    }
    order = list(tasks)
    for end in run_jobs(attempt_job, jobs, workers=workers, scheduler=scheduler,
                        progress=progress):  # fmt: skip
        row = end.value if end.ok else failed_row(tasks[end.key], *_failure(end.error))
        rows[end.key] = row
        write_results(out / RESULTS, [rows[name] for name in order if name in rows])
        if on_row is not None:
            on_row(row)
    return Batch([rows[name] for name in names if name in rows], skipped, sandbox_note)


def _failure(error: str) -> tuple[str, str]:
    """``(stop, detail)`` for a job's error: an ``AttemptFailed`` names its stop."""
    if error.startswith("its worker process died"):
        return "worker_died", error
    kind, _, text = error.partition(": ")
    if kind == "AttemptFailed":
        stop, _, detail = text.partition(": ")
        return stop, detail
    return "attempt_failed", error


def _sandbox(choice: str | None) -> tuple[str | None, str]:
    """The sandbox profile the attempts get, and a line saying which (or why none)."""
    if choice is None:
        return None, "none (as asked)"
    profile = SANDBOX_PROFILE if choice == "auto" else choice
    try:
        Sandbox(profile).check()
    except SandboxUnavailable as exc:
        if choice != "auto":
            raise
        return None, f"none: lesson 12's sandbox cannot start here ({str(exc).splitlines()[0]})"
    return profile, profile
