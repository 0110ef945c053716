"""What one run of the sample's tests costs, and what that makes of `make test`.

`make test` runs the sample's pytest 339 times (counted on 2026-12-03 by logging each
``run_pytest`` call: lessons in kernels, the graded class, the recordings' replays), on
only 16 different trees. This prints the CPU-seconds one run costs three ways:

- ``run_pytest``: the harness as it is (the reaper, then ``python -m pytest``);
- ``python -m pytest``: the same command without the reaper;
- forked: pytest imported once and each run a forked child, the floor of any fork server.

and what each would cost the suite over two cores. Figures are CPU time of the child
processes, so the machine's other load matters less than for wall times.

Run: python bench/sample_test_runs.py [--runs 40]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest  # imported once, before any timing: the forked runs inherit it

from labkit.harness.pytest_run import COMMAND, child_environment, run_pytest
from labkit.harness.sample import SAMPLE_DIR

RUNS_PER_SUITE = 339
CORES = 2


def children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def per_run(runs: int, run) -> float:
    before = children_cpu()
    for _ in range(runs):
        run()
    return (children_cpu() - before) / runs


def forked_run(root: Path) -> None:
    """One run forked from this process, where pytest is already imported."""
    pid = os.fork()
    if pid == 0:
        os.chdir(root)
        sys.path.insert(0, str(root))
        os.environ.clear()
        os.environ.update(child_environment())
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os._exit(int(pytest.main(COMMAND[3:])))
    os.waitpid(pid, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs of each kind (default 40)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "sample"
        shutil.copytree(SAMPLE_DIR, root)
        kinds = {
            "run_pytest (reaper + python -m pytest)": lambda: run_pytest(root, timeout=60),
            "python -m pytest": lambda: subprocess.run(
                COMMAND,
                cwd=root,
                env=child_environment(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
            "forked from an imported pytest": lambda: forked_run(root),
        }
        for name, run in kinds.items():
            seconds = per_run(runs, run)
            print(
                f"{name:40} {seconds * 1000:4.0f} ms CPU a run; {RUNS_PER_SUITE} runs: "
                f"{seconds * RUNS_PER_SUITE:3.0f} CPU-s, {seconds * RUNS_PER_SUITE / CORES:3.0f} s "
                f"on {CORES} cores"
            )


if __name__ == "__main__":
    main()
