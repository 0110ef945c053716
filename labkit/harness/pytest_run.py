"""Run the sample's pytest in a child process: fixed command, scrubbed environment, hard timeout.

Used by both the ``run_tests`` tool (the model's view) and ``run_checks`` (the
independent check). Only the tail of the output is kept, however much the tests print.

When the run ends (or times out) everything it started is killed. On Linux pytest runs
under ``reaper.py``, a child subreaper: every process the tests start stays beneath it,
even one that leaves the process group, double-forks, keeps forking or clears its
environment, and the reaper kills them all before it exits (see its docstring for why
this cannot be outrun). Elsewhere, and as a second net, the run's process group is
killed. Either way the harness returns on time: it never waits for the output pipe to
close.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .byte_cuts import SPLIT, tail_start_after
from .reaper import CLEANUP_SECONDS

#: The only variables the child inherits; everything else (API keys, tokens) stays behind.
PASSED_THROUGH = ("PATH", "LANG", "SYSTEMROOT")
FIXED_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
#: Where a child subreaper exists (Linux), pytest runs under ours; -I keeps the copy's
#: files (the model's) off its import path, and -S site-packages, which the reaper (standard
#: library only) does without: a third less start-up, on every test run and command.
REAPER = (
    [sys.executable, "-I", "-S", str(Path(__file__).with_name("reaper.py"))]
    if sys.platform.startswith("linux")
    else []
)


@dataclass(frozen=True)
class PytestRun:
    exit_code: int
    output: str  # the tail of stdout and stderr together
    timed_out: bool


def child_environment() -> dict[str, str]:
    env = {key: os.environ[key] for key in PASSED_THROUGH if key in os.environ}
    return {**env, **FIXED_ENV}


def run_pytest(root: Path, *, timeout: float, tail_bytes: int = 8000) -> PytestRun:
    """Run pytest in ``root`` and return its exit code and the last ``tail_bytes`` of output."""
    group = (
        {"start_new_session": True}
        if os.name == "posix"
        else {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    )
    process = subprocess.Popen(
        REAPER + COMMAND,
        cwd=root,
        env=child_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        **group,
    )
    tail = deque()
    reader = threading.Thread(
        target=_keep_tail, args=(process.stdout, tail, tail_bytes + SPLIT), daemon=True
    )
    reader.start()
    try:
        timed_out = wait_and_sweep(process, timeout)
    finally:
        reader.join(timeout=5)
    kept = b"".join(tail.copy())[-(tail_bytes + SPLIT) :]
    start = tail_start_after(kept, len(kept) - tail_bytes) if len(kept) > tail_bytes else 0
    output = without_durations(kept[start:].decode("utf-8", errors="replace"))
    if timed_out:
        output += f"\n[labkit: the test run was stopped after {timeout:g} s]"
    if reader.is_alive():  # a process we could not stop still holds the output open
        output += "\n[labkit: a process started by the tests is still running]"
    return PytestRun(process.returncode, output, timed_out)


def wait_and_sweep(process: subprocess.Popen, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``process`` (started as ``REAPER + command`` in a
    new session), then end everything it started; True if it had to be stopped."""
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _stop_reaper(process)  # it kills everything the command started
    finally:
        _kill_group(process)  # what the reaper could not end, or all there is without one
        process.wait()
    return timed_out


_DURATION = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?(?= *=*$)", re.MULTILINE)


def without_durations(output: str) -> str:
    """Drop pytest's ``in 0.02s`` from summary lines: the same tests give the same output,
    so a recorded request can be compared byte for byte when it is replayed."""
    return _DURATION.sub("", output)


def _keep_tail(stream: IO[bytes], tail: deque, limit: int) -> None:
    """Read until every writer has closed the pipe, keeping at least the last ``limit`` bytes.

    The reader closes the pipe itself: closing it from another thread while this one
    reads would block until the last writer, perhaps an escaped process, exits."""
    with stream:
        kept = 0
        for block in iter(lambda: stream.read1(65536), b""):
            tail.append(block)
            kept += len(block)
            while kept - len(tail[0]) >= limit:
                kept -= len(tail.popleft())


def _kill_group(process: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


def _stop_reaper(process: subprocess.Popen) -> None:
    """Ask the reaper to kill everything beneath it, and give it the time it takes."""
    if REAPER:
        process.terminate()
        try:
            process.wait(timeout=CLEANUP_SECONDS + 2)
        except subprocess.TimeoutExpired:
            pass
