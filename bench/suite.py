"""How long does `make test` take here, and which test files fill that time?

Runs the suite exactly as `make test` does (its pytest command, CI=true), ``--runs`` times
in a row, and prints each run's wall time and their median, then for the last run the
files that took longest on their worker (a file's tests run on one worker, one file after
another, so these are what the wall time is made of). The machine's other load counts:
these machines are shared, so compare figures measured in one sitting.

Each run also prints the CPU time the machine spent busy meanwhile (Linux's /proc/stat):
the suite is bound by it, so the wall time cannot fall below it divided by the cores.

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


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since it started, or None off Linux."""
    try:
        fields = [int(value) for value in Path("/proc/stat").read_text().split()[1:9]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + fields[4]  # idle, and waiting for the disk
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def run_once(log: Path, kept: Path) -> tuple[float, float | None, str]:
    kept.mkdir()
    env = {
        **os.environ,
        "CI": "true",
        "LABKIT_RUN_CACHE": str(kept),  # as `make test`: a folder of its own for each run
        "SUITE_TIMELINE": str(log),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
        ),
    }
    # as `make test` does first: compiled once, not by every kernel and command
    compiled = ["labkit", "instructor/labkit_answers"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *compiled], cwd=ROOT, check=True)
    start, busy = time.perf_counter(), busy_seconds()
    done = subprocess.run(COMMAND, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    cpu = busy_seconds() - busy if busy is not None else None
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
    return seconds, cpu, summary


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
            seconds, cpu, summary = run_once(log, Path(scratch) / f"runs{number}")
            times.append(seconds)
            used = f", {cpu:.0f} s of CPU" if cpu is not None else ""
            print(f"run {number}: {seconds:.1f} s wall{used} ({summary.strip('= ')})", flush=True)
        print(
            f"make test, median of {runs}: {statistics.median(times):.1f} s "
            f"on {os.cpu_count()} cores"
        )
        print("longest test files in the last run (seconds on their worker):")
        for seconds, worker, name in longest_files(log):
            print(f"  {seconds:6.1f}  {worker}  {name}")


if __name__ == "__main__":
    main()
