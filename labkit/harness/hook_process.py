"""One command hook run: a program from a list of words, its event as JSON on stdin.

The hook runs as ``run_command`` runs a model's command (``shell.py``): no shell, a new
process under the reaper (``reaper.py``) in its own session, the scrubbed environment of
``pytest_run.child_environment`` (``PATH`` and ``LANG``, never an API key), a working
directory (the run's copy), and a timeout after which it and everything it started are
killed. What it prints is bounded: at most ``MAX_OUTPUT`` bytes of stdout are kept (more
is a failure, ``too_much_output``, not a cut: a JSON reply cut in two means nothing) and
the last ``MAX_STDERR`` bytes of stderr. The event is written from a thread, so a hook
that never reads its stdin cannot block the harness. What the run means is
``hooks.decision_of``'s to say.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from .pytest_run import REAPER, child_environment, wait_and_sweep
from .shell import find_program

MAX_OUTPUT = 64_000  # bytes of stdout a hook may print: its reply is one JSON object
MAX_STDERR = 2_000  # bytes of stderr kept (its end): the reason a hook gives with exit 2


@dataclass(frozen=True)
class HookRun:
    """What one hook process did. ``exit_code`` is None when it was stopped at its timeout
    (negative: killed by that signal); ``too_much`` says stdout passed ``MAX_OUTPUT``."""

    exit_code: int | None
    stdout: str
    stderr: str
    too_much: bool = False


def run_hook_command(
    command: list[str] | tuple[str, ...],
    stdin_text: str,
    *,
    cwd: str | os.PathLike[str],
    timeout: float,
    limit: int = MAX_OUTPUT,
) -> HookRun:
    """Run ``command`` in ``cwd`` with ``stdin_text`` on its stdin; wait at most ``timeout``
    seconds. A program that cannot be started is a crash (exit code 127), as a shell says."""
    env = child_environment()
    try:
        program = find_program(command[0], Path(cwd), env)
        process = subprocess.Popen(
            REAPER + [program, *command[1:]],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
    except OSError as exc:  # FileNotFoundError from find_program, or an exec that failed
        return HookRun(127, "", f"the hook's program could not be started: {exc}")
    out, err = _Kept(limit + 1), _Kept(MAX_STDERR, tail=True)
    threads = [
        threading.Thread(target=_write, args=(process.stdin, stdin_text), daemon=True),
        threading.Thread(target=out.read, args=(process.stdout,), daemon=True),
        threading.Thread(target=err.read, args=(process.stderr,), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        timed_out = wait_and_sweep(process, timeout)
    finally:
        for thread in threads:
            thread.join(timeout=5)
    return HookRun(
        None if timed_out else process.returncode,
        out.text(),
        err.text(),
        too_much=out.total > limit,
    )


def _write(stream, text: str) -> None:
    """Give the hook its event and close its stdin; a hook that exits unread is no error."""
    try:
        with stream:
            stream.write(text.encode("utf-8"))
    except OSError:  # BrokenPipeError: it did not read it all
        pass


class _Kept:
    """The first (or, ``tail``, the last) ``keep`` bytes of a stream, and how many came."""

    def __init__(self, keep: int, *, tail: bool = False):
        self.keep, self.tail, self.total, self.data = keep, tail, 0, bytearray()

    def read(self, stream) -> None:
        with stream:  # closed by this thread, as pytest_run._keep_tail explains
            for block in iter(lambda: stream.read1(65536), b""):
                self.total += len(block)
                if self.tail:
                    self.data = (self.data + block)[-self.keep :]
                elif len(self.data) < self.keep:
                    self.data += block[: self.keep - len(self.data)]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")
