"""``run_command``: the shell tool of lesson 07, one fresh process per call, in the copy.

A command is an argument list, run without a shell: ``["python", "-m", "pytest"]`` runs
pytest, and ``["pytest;", "rm", "-rf", "."]`` looks for a program named ``pytest;``.
Each call starts a new process whose working directory is the disposable copy, so
nothing carries over: a ``cd`` in one call (inside ``sh -c``) cannot move the next.
The child gets the same scrubbed environment as ``run_tests`` and the same sweep of
leftover processes when it ends (``pytest_run``, ``reaper``); stdout and stderr come back
apart, each cut head and tail with a marker saying how many bytes were cut.

``ShellTools`` is ``RepoTools`` with one more tool, ``run_command``, written as the others
are (``toolset.py``'s ``@tool``: its schema above its method).

Without a sandbox, a command runs with your permissions: the permission gate (``gate``)
decides which commands run at all. Given a sandbox (``ShellTools(root, sandbox=...)``,
lesson 12), every command and test run goes inside it: the user's choice, which no argument
of the model can change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .budget import marker
from .byte_cuts import SPLIT, head_end, tail_start_after
from .contracts import Confinement
from .pytest_run import NEW_GROUP, REAPER, child_environment, confined, wait_reading
from .tools import RepoTools
from .toolset import tool

DEFAULT_TIMEOUT = 10.0  # seconds; enough for the sample's tests, short enough to wait for
MAX_TIMEOUT = 60.0  # the most a model may ask for
MAX_OUTPUT = 4_000  # bytes of each stream the model sees: the first and last 2,000
PYTHON_NAMES = ("python", "python3")  # run as the harness's own interpreter (see find_program)


@dataclass(frozen=True)
class CommandRun:
    """What one command did: its exit code, its two streams (cut), and whether it timed out."""

    exit_code: int  # negative: killed by that signal (-9 after a timeout)
    stdout: str
    stderr: str
    timed_out: bool


def run_command(
    root: str | os.PathLike[str],
    command: list[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    limit: int = MAX_OUTPUT,
    sandbox: Confinement | None = None,
) -> CommandRun:
    """Run the argument list ``command`` in ``root`` (inside ``sandbox`` if given) and
    return what it did.

    Raises ``TypeError``/``ValueError`` for a malformed command or timeout and
    ``FileNotFoundError`` for a program that is not on ``PATH``, with a message the
    model can act on.
    """
    command = _checked_command(command)
    timeout = _checked_timeout(timeout)
    env = child_environment()
    program = find_program(command[0], Path(root), env)
    with confined(sandbox, [program, *command[1:]], Path(root), env) as argv:
        try:
            process = subprocess.Popen(
                REAPER + argv,
                cwd=Path(root),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                **NEW_GROUP,
            )
        except PermissionError:
            raise PermissionError(
                f"{command[0][:200]!r} is not a program that can be run"
            ) from None
        ends = {name: _Ends(limit // 2) for name in ("stdout", "stderr")}
        readers = [
            threading.Thread(target=ends[name].read, args=(stream,), daemon=True)
            for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
        ]
        timed_out = wait_reading(process, readers, timeout)
    stderr = ends["stderr"].text()
    if timed_out:
        stderr += f"\n[labkit: the command was stopped after {timeout:g} s]"
    if any(reader.is_alive() for reader in readers):
        stderr += "\n[labkit: a process started by the command is still running]"
    return CommandRun(process.returncode, ends["stdout"].text(), stderr, timed_out)


class ShellTools(RepoTools):
    """The three repository tools plus ``run_command``, all working in ``root``."""

    @tool(
        description=(
            "Run one program in the repository's folder and return its exit_code, stdout and "
            "stderr. Give the program and each argument as separate items, for example "
            '["python", "-m", "pytest", "-q"]. There is no shell: pipes, \';\', \'&&\', '
            "redirections, '*' and variables are passed as plain text, and 'cd' does not "
            "exist. Each call starts afresh in the repository's folder. 'python' is the "
            "Python this repository is tested with (pytest is installed). Long output is cut "
            "in the middle. A person may refuse a command; then you get an error instead."
        ),
        parameters={
            "type": "object",
            "properties": {
                "command": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "The program to run, then its arguments, one item each.",
                },
                "timeout": {
                    "type": "number",
                    "minimum": 1,
                    "maximum": MAX_TIMEOUT,
                    "description": f"Seconds to wait before stopping the command "
                    f"(default {DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g}).",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        },
        takes="'command' (a list of strings) and optionally 'timeout'",
    )
    def run_command(self, command: list[str], timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Run ``command`` in the copy (the module's ``run_command``) and report what it did."""
        run = run_command(self.root, command, timeout=timeout, sandbox=self.sandbox)
        return {
            "exit_code": run.exit_code,
            "timed_out": run.timed_out,
            "stdout": run.stdout,
            "stderr": run.stderr,
        }


#: ``run_command``'s schema, as the model is sent it.
SCHEMA = ShellTools.run_command.schema


def find_program(name: str, root: Path, env: dict) -> str:
    """The program file ``name`` stands for, found as the child would find it (the reaper
    starts it, so a missing program must be caught here, with advice for the model).

    ``python`` is the interpreter running the harness, whatever ``PATH`` holds: the one
    with pytest installed, so the same command gives the same output everywhere."""
    if name in PYTHON_NAMES:
        return sys.executable
    found = (
        shutil.which(name, path=env.get("PATH"))
        if os.sep not in name
        else (
            str(root / name)
            if os.access(root / name, os.X_OK) and (root / name).is_file()
            else None
        )
    )
    if found is None:
        raise FileNotFoundError(
            f"no program named {name[:200]!r} was found on PATH; "
            "there is no shell, so give the program itself, e.g. "
            '["python", "-m", "pytest"]'
        )
    return found


def _checked_command(command) -> list:
    if isinstance(command, str):
        raise TypeError(
            "'command' must be a list of strings, one per argument, not one "
            f"string: e.g. {command.split()[:4]!r}"
        )
    if not isinstance(command, list) or not command:
        raise TypeError("'command' must be a non-empty list of strings")
    for item in command:
        if not isinstance(item, str):
            raise TypeError(f"every item of 'command' must be a string, not {type(item).__name__}")
        if "\0" in item:
            raise ValueError(
                "an argument of 'command' contains a NUL byte, which no program can receive"
            )
    if not command[0]:
        raise ValueError("the program name (the first item of 'command') is empty")
    return list(command)


def _checked_timeout(timeout) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"'timeout' must be a number of seconds, not {type(timeout).__name__}")
    if not 1 <= timeout <= MAX_TIMEOUT:  # also refuses NaN
        raise ValueError(
            f"'timeout' must be between 1 and {MAX_TIMEOUT:g} seconds, got {timeout!r}"
        )
    return float(timeout)


class _Ends:
    """The first and last ``keep`` bytes of a stream, and how many came in all.

    It keeps three bytes more at each end, so a cut never splits a character: the head
    ends before a character the cut would split, the tail starts after one, and those
    bytes count as cut. Bytes that are not UTF-8 are the program's own: they are shown as
    U+FFFD, wherever they are.
    """

    def __init__(self, keep: int):
        self.keep, self.total = keep, 0
        self.head, self.tail, self.tail_size = bytearray(), deque(), 0

    def read(self, stream) -> None:
        with stream:  # closed by this thread, for the reason given in pytest_run._keep_tail
            for block in iter(lambda: stream.read1(65536), b""):
                self.add(block)

    def add(self, block: bytes) -> None:
        self.total += len(block)
        room = self.keep + SPLIT - len(self.head)
        if room > 0:
            self.head += block[:room]
            block = block[room:]
        if block:
            self.tail.append(block)
            self.tail_size += len(block)
            while self.tail and self.tail_size - len(self.tail[0]) >= self.keep + SPLIT:
                self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        head = bytes(self.head)
        tail = b"".join(self.tail)[-(self.keep + SPLIT) :]
        if self.total <= 2 * self.keep:  # nothing to cut: every byte is here, in order
            return (head + tail).decode("utf-8", errors="replace")
        if self.total == len(head) + len(tail):  # all here: one run of bytes, cut twice
            whole = head + tail
            head, tail_start, tail = whole, len(whole) - self.keep, whole
        else:
            tail_start = len(tail) - self.keep
        head = head[: head_end(head, self.keep)]
        tail = tail[tail_start_after(tail, tail_start) :]
        cut = self.total - len(head) - len(tail)
        return (
            head.decode("utf-8", errors="replace")
            + marker(cut, "bytes")
            + tail.decode("utf-8", errors="replace")
        )
