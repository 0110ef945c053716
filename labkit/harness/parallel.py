"""Calls of one turn run at once: which calls may, how they run, and how their results line up.

A model may ask for several calls in one turn (lesson 03). When they only read (each
``Tool`` record says so: ``read_only``), nothing one does can change what another sees, so
they may run at the same time: three file reads, or two subagents exploring the repository,
take about as long as the slowest instead of the sum. A call that changes something (an
edit, a command, the plan) still runs alone and in its place.

- ``batches``: a turn's calls cut into batches in order: each run of consecutive read-only
  calls is one batch, each other call a batch of its own. Batches run one after another,
  so a write never overlaps a read asked before or after it.
- ``ThreadRunner``: runs one batch's jobs on a bounded pool of threads (``workers``, at most
  :data:`MAX_WORKERS`) and waits at most ``timeout`` seconds for the batch. It returns one
  :class:`~.contracts.Outcome` per job, **in the order the jobs were given**, whatever order
  they ended in: a value, or the exception the job raised, or ``timed_out``. A job that
  fails or is late loses nothing of the others'. A late job's thread is not killed (Python
  cannot stop a thread): its result is dropped when it ends, and since only read-only
  calls run here, dropping it changes nothing. The tools' own timeouts (a command's, a
  search's) still bound how long it runs.
- ``late_result``: what the model reads for a call that did not end in time.

The loop (``loop.py``) judges every call of a batch before the batch runs (hooks, the gate:
lesson 07's person may be asked, one question at a time), then finishes them in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

from .contracts import Outcome, ToolCall, Tools

MAX_WORKERS = 16  # threads a runner may use at most: each may hold a model stream or a process
DEFAULT_WORKERS = 4


class ThreadRunner:
    """Runs a batch's jobs on up to ``workers`` threads; waits ``timeout`` seconds at most
    (None: as long as they take). A batch of one job runs in the caller's thread."""

    def __init__(self, workers: int = DEFAULT_WORKERS, timeout: float | None = None) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int):
            raise ValueError(f"workers is an int from 1 to {MAX_WORKERS}, not {workers!r}")
        if not 1 <= workers <= MAX_WORKERS:
            raise ValueError(f"workers is from 1 to {MAX_WORKERS}, not {workers}")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
        ):
            raise ValueError(f"timeout is a number of seconds above 0, or None; not {timeout!r}")
        self.workers = workers
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"ThreadRunner(workers={self.workers}, timeout={self.timeout})"

    def run(self, jobs: Sequence[Callable[[], object]]) -> list[Outcome]:
        if len(jobs) == 1:
            return [_outcome(jobs[0])]
        started = [threading.Event() for _ in jobs]

        def marked(index: int) -> object:
            started[index].set()
            return jobs[index]()

        pool = ThreadPoolExecutor(
            max_workers=min(self.workers, len(jobs)), thread_name_prefix="labkit-call"
        )
        try:
            futures = [pool.submit(marked, index) for index in range(len(jobs))]
            done, _ = wait(futures, timeout=self.timeout)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # a late job is left to end alone
        outcomes = []
        for index, future in enumerate(futures):
            if future not in done:
                outcomes.append(Outcome(timed_out=True, started=started[index].is_set()))
            elif future.exception() is not None:
                outcomes.append(Outcome(error=future.exception()))
            else:
                outcomes.append(Outcome(value=future.result()))
        return outcomes


def _outcome(job: Callable[[], object]) -> Outcome:
    """A job run here and now. Whatever it raises propagates, as a call run alone always
    did: nothing was run beside it that an exception could lose."""
    return Outcome(value=job())


def batches(calls: Sequence[ToolCall], tools: Tools, parallel: bool) -> Iterator[list[ToolCall]]:
    """``calls`` in order, cut into batches: consecutive calls that ``tools`` marks read-only
    together, each other call alone. Without ``parallel`` every call is a batch of its own."""
    is_read_only = getattr(tools, "is_read_only", None) if parallel else None
    batch: list[ToolCall] = []
    for call in calls:
        if is_read_only is not None and is_read_only(call.name):
            batch.append(call)
            continue
        if batch:
            yield batch
            batch = []
        yield [call]
    if batch:
        yield batch


def late_result(name: str, timeout: float | None, started: bool) -> dict:
    """The result the model reads for a call that did not end within the batch's timeout."""
    what = "did not finish" if started else "did not start"
    return {
        "error": f"{name} {what} within {timeout:g} s, so the harness stopped waiting for it "
        "(the other calls of this turn have their results); call it again if you need it"
    }
