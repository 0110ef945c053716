"""How does the batch runner (lesson 14) scale with workers, and what does Dask cost?

The recorded task set (seven tasks, each its scripted attempt replayed strictly: the tools and
the tests really run) is laid out COPIES times over in a scratch folder, so that a run holds
enough attempts for the workers' start-up not to dominate. Three runs in one go, each into a
fresh folder, in lesson 12's sandbox where it starts (as the lesson runs them):

- the local pool (``labkit/engine.py``) with 1 worker, then with 2: their ratio is the
  throughput gained by the second core (the aim: at least 1.7x on 2 idle cores);
- a real Dask cluster on loopback (``dask scheduler`` and two ``dask worker`` processes, as the
  test suite starts them) with the same two workers: its time over the local pool's is the
  overhead of the Dask path at the same worker count (the cluster's start-up is not counted).

Every run must score the same rows (stop and tests after) as the others. On a machine where
other work shares the cores, the ratio says so: rerun it on an idle machine.

Run: python bench/batch.py [COPIES]   (default 3: 21 attempts per run)
"""

import shutil
import sys
import tempfile
import time
from pathlib import Path

from labkit import TASK_RECORDINGS, TASKS_DIR, load_tasks, run_batch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from dask_cluster import dask_cluster  # noqa: E402  (the tests' loopback cluster)


def lay_out(scratch: Path, copies: int) -> tuple[Path, Path]:
    """The task set and its recordings, each task ``copies`` times (``name__k``)."""
    tasks, recordings = scratch / "tasks", scratch / "recordings"
    recordings.mkdir(parents=True)
    for name in load_tasks():
        for k in range(copies):
            shutil.copytree(TASKS_DIR / name, tasks / f"{name}__{k}")
            shutil.copyfile(TASK_RECORDINGS / f"{name}.json", recordings / f"{name}__{k}.json")
    return tasks, recordings


def timed(out: Path, tasks: Path, recordings: Path, **where) -> tuple[float, list]:
    started = time.perf_counter()
    batch = run_batch(out, taskset=tasks, model={"replay": str(recordings)}, **where)
    seconds = time.perf_counter() - started
    return seconds, [(row["task"], row["stop"], row["tests_after"]) for row in batch.rows]


def main(copies: int = 3) -> None:
    with tempfile.TemporaryDirectory(prefix="labkit-bench-batch-") as folder:
        scratch = Path(folder)
        tasks, recordings = lay_out(scratch, copies)
        attempts = len(load_tasks(tasks))
        one, rows_one = timed(scratch / "one", tasks, recordings, workers=1)
        two, rows_two = timed(scratch / "two", tasks, recordings, workers=2)
        (scratch / "dask").mkdir()
        with dask_cluster(scratch / "dask", workers=2) as address:
            dask, rows_dask = timed(scratch / "dask_run", tasks, recordings, scheduler=address)
    assert rows_one == rows_two == rows_dask, "the runs scored the task set differently"
    print(f"batch: {attempts} recorded attempts; 1 worker {one:.1f} s, 2 workers {two:.1f} s")
    print(f"batch: 2 workers / 1 worker throughput: {one / two:.2f}x (aim: >= 1.7x on 2 cores)")
    print(f"batch: Dask (2 workers) / local pool (2 workers) time: {dask / two:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
