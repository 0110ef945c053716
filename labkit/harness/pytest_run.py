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

Given a sandbox (``Confinement``: lesson 12's ``sandbox.Sandbox``), pytest runs inside it,
under the same reaper, timeout and tail: the command is the same, only where it runs differs.
"""

from __future__ import annotations

import contextlib
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
from .contracts import Confinement
from .reaper import CLEANUP_SECONDS
from .run_cache import cache_folder, keep_run, kept_run, tree_digest

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


#: How a run starts: in a group (a session) of its own, so the whole group can be killed.
NEW_GROUP = (
    {"start_new_session": True}
    if os.name == "posix"
    else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
)


@dataclass(frozen=True)
class PytestRun:
    exit_code: int
    output: str  # the tail of stdout and stderr together
    timed_out: bool


def child_environment() -> dict[str, str]:
    env = {key: os.environ[key] for key in PASSED_THROUGH if key in os.environ}
    return {**env, **FIXED_ENV}


def run_pytest(
    root: Path, *, timeout: float, tail_bytes: int = 8000, sandbox: Confinement | None = None
) -> PytestRun:
    """Run pytest in ``root`` (inside ``sandbox`` if given) and return its exit code and the
    last ``tail_bytes`` of output. Where the suite keeps finished runs (``run_cache``), one
    of the same files, command and environment is taken from there instead."""
    env = child_environment()
    folder = cache_folder() if sandbox is None else None
    asked = [*COMMAND, f"timeout={timeout:g}", f"tail_bytes={tail_bytes}"]
    key = tree_digest(root, asked, env) if folder else None
    if key and (kept := kept_run(folder, key)):
        return PytestRun(kept[0], kept[1], timed_out=False)
    run = _run(root, timeout, tail_bytes, sandbox, env)
    finished = not run.timed_out and not run.output.endswith(STILL_RUNNING)
    if key and finished and tree_digest(root, asked, env) == key:  # its tree as it was
        keep_run(folder, key, run.exit_code, run.output)
    return run


STILL_RUNNING = "\n[labkit: a process started by the tests is still running]"


def _run(
    root: Path, timeout: float, tail_bytes: int, sandbox: Confinement | None, env: dict
) -> PytestRun:
    with confined(sandbox, COMMAND, root, env) as command:
        process = subprocess.Popen(
            REAPER + command,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            **NEW_GROUP,
        )
        tail = deque()
        reader = threading.Thread(
            target=_keep_tail, args=(process.stdout, tail, tail_bytes + SPLIT), daemon=True
        )
        timed_out = wait_reading(process, [reader], timeout)
    kept = b"".join(tail.copy())[-(tail_bytes + SPLIT) :]
    start = tail_start_after(kept, len(kept) - tail_bytes) if len(kept) > tail_bytes else 0
    output = without_durations(kept[start:].decode("utf-8", errors="replace"))
    if timed_out:
        output += f"\n[labkit: the test run was stopped after {timeout:g} s]"
    if reader.is_alive():  # a process we could not stop still holds the output open
        output += STILL_RUNNING
    return PytestRun(process.returncode, output, timed_out)


def confined(
    sandbox: Confinement | None, command: list[str], root: Path, env: dict[str, str]
) -> contextlib.AbstractContextManager[list[str]]:
    """The argument list that runs ``command`` in ``root``: inside ``sandbox`` (with ``env``
    set inside, where nothing else is inherited), or as it is without one."""
    if sandbox is None:
        return contextlib.nullcontext(list(command))
    return sandbox.wrapped(command, str(root), env=env)


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


def exit_status(process: subprocess.Popen, stderr: str) -> str:
    """How a server whose stdout closed ended: its exit code and the last line it wrote on
    stderr, or that only its stdout closed (it still runs a second later)."""
    try:
        code = process.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return "its stdout closed"
    said = stderr.strip().splitlines()[-1:]
    last = f"; its last words on stderr: {said[0][:200]}" if said else ""
    return f"exit code {code}{last}"


def start_server(
    command: list[str], cwd: Path, env: dict[str, str], read_stdout, read_stderr
) -> tuple[subprocess.Popen, list[threading.Thread]]:
    """Start a server spoken to over its stdin and stdout (an MCP or a language server)
    under the reaper, in a session of its own, and a thread draining each of its output
    pipes (``read_stdout(process.stdout)``, ``read_stderr(process.stderr)``);
    ``close_server`` ends all of it."""
    process = subprocess.Popen(
        REAPER + list(command),
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=os.name == "posix",
    )
    readers = [
        threading.Thread(target=read, args=(pipe,), daemon=True)
        for read, pipe in ((read_stdout, process.stdout), (read_stderr, process.stderr))
    ]
    for reader in readers:
        reader.start()
    return process, readers


def close_server(process: subprocess.Popen, readers: list, grace: float) -> None:
    """End a server spoken to over its stdin and stdout (an MCP or a language server): close
    its stdin, give it ``grace`` seconds to exit, end everything it started, then give the
    threads reading its pipes two seconds each to see them close."""
    try:
        process.stdin.close()
    except OSError:
        pass
    wait_and_sweep(process, grace)
    for reader in readers:
        reader.join(timeout=2)


def wait_reading(process: subprocess.Popen, readers: list, timeout: float) -> bool:
    """Start ``readers`` (threads that drain the process's pipes), wait for ``process`` as
    ``wait_and_sweep`` does, then give each reader a few seconds to see its pipe close;
    True if the process had to be stopped. A reader still alive afterwards means a
    process that escaped holds the pipe open."""
    for reader in readers:
        reader.start()
    try:
        return wait_and_sweep(process, timeout)
    finally:
        for reader in readers:
            reader.join(timeout=5)


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
