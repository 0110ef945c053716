"""The engine that grading and task-set runs share: many jobs, results back as they end.

On this machine's cores, and on a real Dask cluster (a ``dask scheduler`` and two ``dask
worker`` processes started here on loopback): every job ends once, with its value or a
named error; a job that raises or kills its worker loses nothing of the others; stopping
early leaves no worker behind.
"""

import os
import time
from pathlib import Path

import engine_jobs
import pytest
from dask_cluster import dask_cluster

from labkit.engine import Finished, run_jobs

TESTS = Path(__file__).parent


def test_every_job_ends_once_with_its_value():
    results = list(run_jobs(engine_jobs.square, {f"n{n}": (n,) for n in range(7)}, workers=2))
    assert sorted(r.key for r in results) == [f"n{n}" for n in range(7)]
    assert {r.key: r.value for r in results} == {f"n{n}": n * n for n in range(7)}
    assert all(r.ok for r in results)


def test_a_job_that_raises_ends_with_its_error_and_the_others_go_on():
    jobs = {"a": (2,), "b": (3,)}
    results = {r.key: r for r in run_jobs(engine_jobs.square, jobs, workers=2)}
    failing = {r.key: r for r in run_jobs(engine_jobs.fail, {"x": ("no file",)}, workers=1)}
    assert results["a"].value == 4 and results["b"].value == 9
    assert failing["x"] == Finished("x", error="ValueError: no file")


def test_a_job_that_kills_its_worker_ends_named_and_the_jobs_beside_it_finish():
    """A worker's death breaks the whole local pool: the jobs that were running run again,
    each alone, so only the job that dies again is lost, and it is named."""
    keys = ["dies", "ok0", "ok1", "ok2"]
    results = {r.key: r for r in run_jobs(engine_jobs.die_if_named, {k: (k,) for k in keys},
                                          workers=2)}  # fmt: skip
    assert set(results) == set(keys)
    assert results["dies"].error == "its worker process died"
    assert all(results[key].value == key for key in keys[1:])


def test_stopping_early_ends_every_worker(tmp_path):
    jobs = {name: (seconds, str(tmp_path), name) for name, seconds in
            (("quick", 0.0), ("slow0", 60.0), ("slow1", 60.0))}  # fmt: skip
    started = time.monotonic()
    runs = run_jobs(engine_jobs.sleep_and_tell, jobs, workers=3)
    first = next(runs)
    slow = [tmp_path / "slow0", tmp_path / "slow1"]
    while not all(f.exists() and f.read_text() for f in slow) and time.monotonic() - started < 30:
        time.sleep(0.05)  # both slow jobs are running in their workers
    pids = [int(f.read_text()) for f in slow]
    runs.close()
    assert first.key == "quick" and len(set(pids)) == 2
    assert not [pid for pid in pids if _alive(pid)], "a worker outlived the run"
    assert time.monotonic() - started < 30


def test_workers_must_be_a_positive_int():
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="workers must be a positive int"):
            list(run_jobs(engine_jobs.square, {"a": (1,)}, workers=bad))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())


# --- a real Dask cluster on loopback ----------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with dask_cluster(tmp_path_factory.mktemp("dask")) as address:
        yield address


def test_the_same_jobs_run_on_a_dask_cluster(cluster):
    results = {r.key: r for r in run_jobs(engine_jobs.square, {f"n{n}": (n,) for n in range(6)},
                                          scheduler=cluster)}  # fmt: skip
    failing = list(run_jobs(engine_jobs.fail, {"x": ("no file",)}, scheduler=cluster))
    assert {key: r.value for key, r in results.items()} == {f"n{n}": n * n for n in range(6)}
    assert failing == [Finished("x", error="ValueError: no file")]


def test_on_dask_both_workers_take_jobs(cluster):
    pids = {r.value for r in run_jobs(engine_jobs.pid_after, {f"j{n}": (0.5,) for n in range(6)},
                                      scheduler=cluster)}  # fmt: skip
    assert len(pids) == 2
