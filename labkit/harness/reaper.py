"""Run a command, then end every process it left behind (Linux):
``python -I -S reaper.py COMMAND...``.

The reaper makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): any
process started under it that loses its parent (``setsid()``, a double fork, a chain
of forks whose parents exit, a daemon whose main thread ended) is re-parented to the
reaper rather than to init, whatever it did to its environment or process group. So
when the command ends, or the reaper receives SIGTERM, its children are all that is
left: it kills them until ``waitpid`` says none remain, which no forking can outrun
for long, then exits as the command did. Only a process started by another service
(cron, ``systemd-run``, ``ssh``) or one that kills the reaper first gets away.

It imports only the standard library and runs in isolated mode (``-I``), so nothing in
the folder it runs in (the copy the model edits) can stand in for it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36  # from <linux/prctl.h>
CLEANUP_SECONDS = 5.0  # how long the reaper keeps killing before it gives up


class Stop(Exception):
    """Raised by the SIGTERM handler: the harness's timeout has passed."""


def become_subreaper() -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux, or no prctl
        return False


def children() -> list[int]:
    """The pids whose parent is this process, read from ``/proc/<pid>/stat``."""
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):  # gone meanwhile
                continue
            if parent == me:
                found.append(int(name))
    return found


def kill_every_child(seconds: float = CLEANUP_SECONDS) -> bool:
    """SIGKILL and reap children until there are none; False if ``seconds`` ran out first.

    ``waitpid`` raising ``ChildProcessError`` is the proof: no child, live or zombie, is
    left, so none of their descendants is either (an orphan would have become a child).
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for pid in children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return True
        time.sleep(0.001)
    return False


def main(command: list[str]) -> None:
    def stop(signum: int, frame: object) -> None:
        raise Stop

    signal.signal(signal.SIGTERM, stop)
    become_subreaper()  # if refused, orphans escape as they would without the reaper
    try:
        status = subprocess.Popen(command).wait()
    except Stop:
        status = -signal.SIGKILL  # stopped from outside, as if killed
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_every_child()
    if status < 0:  # end the way the command ended, so the caller sees the same status
        if -status not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler to reset
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
