"""Run the sample's pytest in a child process: fixed command, scrubbed environment, hard timeout.

Used by both the ``run_tests`` tool (the model's view) and ``run_checks`` (the
independent check). Only the tail of the output is kept, however much the tests print.

When the run ends (or times out) everything it started is killed: its process group,
and, on systems with ``/proc``, every process still carrying this run's marker in its
environment, which catches children that left the group with ``setsid()`` or a double
fork. A process that also clears its environment escapes (see SECURITY.md), but even
then the harness returns on time: it never waits for the output pipe to close.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

#: The only variables the child inherits; everything else (API keys, tokens) stays behind.
PASSED_THROUGH = ("PATH", "LANG", "SYSTEMROOT")
FIXED_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
#: Set to a fresh random value for each run, so its processes can be found and stopped.
RUN_MARKER = "LABKIT_TEST_RUN"


@dataclass(frozen=True)
class PytestRun:
    exit_code: int
    output: str  # the tail of stdout and stderr together
    timed_out: bool


def child_environment() -> dict:
    env = {key: os.environ[key] for key in PASSED_THROUGH if key in os.environ}
    return {**env, **FIXED_ENV}


def run_pytest(root: Path, *, timeout: float = 30.0, tail_bytes: int = 8000) -> PytestRun:
    """Run pytest in ``root`` and return its exit code and the last ``tail_bytes`` of output."""
    group = {"start_new_session": True} if os.name == "posix" else {
        "creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    marker = secrets.token_hex(8)
    process = subprocess.Popen(
        COMMAND, cwd=root, env={**child_environment(), RUN_MARKER: marker},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **group)
    tail = deque()
    reader = threading.Thread(target=_keep_tail, args=(process.stdout, tail, tail_bytes), daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill_group(process)  # also ends children a finished run left behind
        _kill_marked(marker)  # and those that left the group
        process.wait()
        reader.join(timeout=5)
    output = without_durations(b"".join(tail.copy())[-tail_bytes:].decode("utf-8", errors="replace"))
    if timed_out:
        output += f"\n[labkit: the test run was stopped after {timeout:g} s]"
    if reader.is_alive():  # a process we could not stop still holds the output open
        output += "\n[labkit: a process started by the tests is still running]"
    return PytestRun(process.returncode, output, timed_out)


_DURATION = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?(?= *=*$)", re.MULTILINE)


def without_durations(output: str) -> str:
    """Drop pytest's ``in 0.02s`` from summary lines: the same tests give the same output,
    so a recorded request can be compared byte for byte when it is replayed."""
    return _DURATION.sub("", output)


def _keep_tail(stream, tail: deque, limit: int) -> None:
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


def _kill_marked(marker: str) -> None:
    """Kill every process whose environment carries this run's marker (Linux: via /proc).

    A child that left the process group still inherited the environment. Looks again
    after each round, since a process may have forked meanwhile; gives up after a few.
    """
    wanted = f"{RUN_MARKER}={marker}".encode()
    for _ in range(10):
        found = [pid for pid in _process_ids() if wanted in _environment_of(pid)]
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _process_ids() -> list:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc (macOS, Windows): the process group is all we can reach
        return []


def _environment_of(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            return file.read().split(b"\0")
    except OSError:  # gone, or not ours
        return []
