"""A real Dask cluster on loopback for the tests: ``dask scheduler`` and ``dask worker``
processes, each in its own session, ended (and waited for) when the block ends.

    with dask_cluster(tmp_folder, workers=2) as address:   # "tcp://127.0.0.1:PORT"
        run_jobs(work, jobs, scheduler=address)

The workers import what the tests' own folder holds (``PYTHONPATH``), as a real cluster's
workers have labkit installed; a worker's death ends its task at once (``allowed-failures``
0, read by the scheduler).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).parent


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int = 2, timeout: float = 60) -> Iterator[str]:
    file = folder / "scheduler.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
    }
    quiet = {"env": env, "start_new_session": True, "stdout": subprocess.DEVNULL,
             "stderr": subprocess.DEVNULL}  # fmt: skip
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
         "--scheduler-file", str(file)],
        **quiet,
    )  # fmt: skip
    started = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                "--scheduler-file",
                str(file),
                "--host",
                "127.0.0.1",
                "--nthreads",
                "1",
                "--no-dashboard",
                "--memory-limit",
                "0",
                "--name",
                f"w{n}",
            ],
            **quiet,
        )  # fmt: skip
        for n in range(workers)
    ]
    try:
        from distributed import Client

        deadline = time.monotonic() + timeout
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        with Client(scheduler_file=str(file), timeout=f"{timeout}s") as client:
            client.wait_for_workers(workers, timeout=timeout)
            address = client.scheduler.address
        yield address
    finally:
        for process in [*started, scheduler]:  # the workers first, then the scheduler
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*started, scheduler]:
            process.wait(timeout=20)
