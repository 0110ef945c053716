"""How long does `make test` take here, and which test files fill that time?

Runs the suite exactly as `make test` does (its pytest command, CI=true), ``--runs`` times
in a row, and prints each run's wall time and their median, then for the last run the
files that took longest on their worker (a file's tests run on one worker, one file after
another, so these are what the wall time is made of). The machine's other load counts:
these machines are shared, so compare figures measured in one sitting.

Run: python bench/suite.py [--runs 3]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [
    sys.executable,
    "-m",
    "pytest",
    "-n",
    "auto",
    "--dist",
    "loadfile",
    "--no-loadscope-reorder",
    "-q",
    "-p",
    "suite_timeline",
]  # as the Makefile's `test`
SHOWN = 8  # the longest files listed


def run_once(log: Path) -> tuple[float, str]:
    env = {
        **os.environ,
        "CI": "true",
        "SUITE_TIMELINE": str(log),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
        ),
    }
    start = time.perf_counter()
    done = subprocess.run(COMMAND, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    summary = next(
        (
            line
            for line in reversed(done.stdout.splitlines())
            if re.search(r"\d+ (passed|failed)", line)
        ),
        "no summary",
    )
    if done.returncode != 0:
        sys.exit(f"the suite failed (exit {done.returncode}): {summary}")
    return seconds, summary


def longest_files(log: Path) -> list[tuple[float, str, str]]:
    spans = {}  # (worker, file) -> [first start, last end]
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        span = spans.setdefault((entry["worker"], entry["file"]), [entry["start"], entry["end"]])
        span[0], span[1] = min(span[0], entry["start"]), max(span[1], entry["end"])
    return sorted(
        ((end - start, worker, name) for (worker, name), (start, end) in spans.items()),
        reverse=True,
    )[:SHOWN]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs in a row (default 1)")
    runs = parser.parse_args().runs
    times = []
    with tempfile.TemporaryDirectory(prefix="labkit-suite-") as scratch:
        for number in range(1, runs + 1):
            log = Path(scratch) / f"run{number}.jsonl"
            seconds, summary = run_once(log)
            times.append(seconds)
            print(f"run {number}: {seconds:.1f} s wall ({summary.strip('= ')})", flush=True)
        print(
            f"make test, median of {runs}: {statistics.median(times):.1f} s "
            f"on {os.cpu_count()} cores"
        )
        print("longest test files in the last run (seconds on their worker):")
        for seconds, worker, name in longest_files(log):
            print(f"  {seconds:6.1f}  {worker}  {name}")


if __name__ == "__main__":
    main()
