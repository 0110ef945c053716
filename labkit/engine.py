"""Many independent jobs at once, on this machine's cores or on a Dask cluster.

Grading a class (``python -m labkit grade``) and running a task set (lesson 14) are the same
shape of work: many jobs, none depending on another, each a call of one function that does
its risky part in a child process of its own (a sandboxed kernel, an attempt on a copy). The
engine runs the calls in worker processes and hands each result back, as it finishes, to the
one process that asked: that process alone writes what must be written once (a gradebook, a
results file), so workers never share a file.

- ``run_jobs(work, jobs)`` yields one :class:`Finished` per job, in the order they finish.
  ``work`` is a function importable by its module's name (workers import it, not a copy of
  it); ``jobs`` maps each job's key to the arguments of its call.
- On this machine (the default) the workers are ``workers`` processes (the cores, if not
  said) started afresh (``spawn``), so nothing of the caller's state leaks into a job. A
  worker that dies (killed, out of memory) takes the pool down with the jobs running in it:
  each of those runs again alone, and only the one that dies again ends with that reason;
  the others lose nothing (so a job may run twice: jobs write only to places of their own,
  and the caller writes once).
- With ``scheduler="tcp://host:port"`` the same calls go to a Dask cluster of many machines
  (``pip install 'labkit[cluster]'``; every worker needs labkit installed). A job that raises
  is not retried. A job whose worker dies is what the scheduler's
  ``distributed.scheduler.allowed-failures`` says (set it to 0 on the scheduler, e.g.
  ``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0``, to end such a job at once).
- A job that raises ends with the exception's type and text; nothing else is lost.
  Stopping the loop over the results (Ctrl-C, an error in the caller) ends every worker:
  jobs that had not finished are simply not yielded, and a caller that keeps what finished
  can resume with the rest.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass


@dataclass(frozen=True)
class Finished:
    """One job's end: what its call returned (``value``), or why it has none (``error``)."""

    key: str
    value: object = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def run_jobs(
    work: Callable[..., object],
    jobs: Mapping[str, tuple],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
) -> Iterator[Finished]:
    """Run ``work(*jobs[key])`` for every key, in worker processes; yield each as it ends."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):  # fmt: skip
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    bar = _Bar(len(jobs), progress)
    runs = _on_dask(work, jobs, scheduler) if scheduler else _on_cores(work, jobs, workers)
    try:
        for finished in runs:
            bar.update(finished)
            yield finished
    finally:
        runs.close()
        bar.close()


def _on_cores(work, jobs: Mapping[str, tuple], workers: int | None) -> Iterator[Finished]:
    """The jobs on a pool of fresh processes, at most ``workers`` running at a time. When a
    worker dies, the pool is lost with every job running in it: each of those is run again
    alone, in a pool of its own, so that a death names its job and no other."""
    waiting = list(jobs)
    while waiting:
        suspects = yield from _in_pool(work, jobs, waiting, workers or os.cpu_count() or 1)
        for key in suspects:
            if (yield from _in_pool(work, jobs, [key], 1)):
                yield Finished(key, error="its worker process died")


def _in_pool(work, jobs: Mapping[str, tuple], keys: list[str], window: int):
    """Run ``keys`` (taken from the list as they start) in one fresh pool, yielding each end;
    return the keys that were running when a worker died and took the pool with it."""
    pool = ProcessPoolExecutor(window, mp_context=multiprocessing.get_context("spawn"))
    running: dict[Future, str] = {}
    try:
        while keys or running:
            while keys and len(running) < window:  # a window, so a dead pool loses few jobs
                key = keys.pop(0)
                running[pool.submit(work, *jobs[key])] = key
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    value = future.result()
                except BrokenProcessPool:
                    return list(running.values())
                except Exception as exc:  # the job raised: its own end, not the engine's
                    yield Finished(running.pop(future), error=_named(exc))
                else:
                    yield Finished(running.pop(future), value=value)
        return []
    finally:
        _stop(pool)


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool now: its workers are killed, not waited for (a job may run for minutes)."""
    processes = list(getattr(pool, "_processes", {}).values())  # no public way to reach them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=5)


def _on_dask(work, jobs: Mapping[str, tuple], scheduler: str) -> Iterator[Finished]:
    """The jobs on the Dask cluster whose scheduler is at ``scheduler``."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise RuntimeError(
            "a Dask scheduler was given, but Dask is not installed here: "
            "pip install 'labkit[cluster]' (every worker needs labkit too)"
        ) from None
    with Client(scheduler, timeout="30s") as client:
        futures = {
            client.submit(work, *arguments, pure=False, retries=0, key=_task_key(key)): key
            for key, arguments in jobs.items()
        }
        try:
            for future in as_completed(futures):
                key = futures[future]
                try:
                    yield Finished(key, value=future.result())
                except Exception as exc:
                    yield Finished(key, error=_named(exc))
        finally:
            client.cancel(list(futures))


def _task_key(key: str) -> str:
    """A key for Dask unique to this run: a cluster remembers the tasks of earlier runs."""
    return f"{key}-{os.urandom(4).hex()}"


def _named(exc: BaseException) -> str:
    text = str(exc)
    if type(exc).__name__ == "KilledWorker":
        return f"its worker process died ({text[:300]})"
    return f"{type(exc).__name__}: {text[:2000]}" if text else type(exc).__name__


class _Bar:
    """Counts, and (with ``progress``) a tqdm bar with the counts and an estimate of the rest."""

    def __init__(self, total: int, progress: bool):
        self.done = self.failed = 0
        self.tqdm = None
        if progress:
            from tqdm.auto import tqdm

            self.tqdm = tqdm(total=total, unit="job", smoothing=0.1)

    def update(self, finished: Finished) -> None:
        self.done += 1
        self.failed += not finished.ok
        if self.tqdm is not None:
            self.tqdm.set_postfix(failed=self.failed, refresh=False)
            self.tqdm.update(1)

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()
