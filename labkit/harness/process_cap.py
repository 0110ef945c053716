"""How many processes a sandbox may hold at once, when the harness runs as root.

``RLIMIT_NPROC`` counts a user's processes, and the kernel never applies it to root (nor to
a user namespace root made, which keeps root's real uid). So as root the sandbox gets a
*pids cgroup* of its own: a folder in the cgroup file system whose ``pids.max`` the kernel
enforces on every process in it, whoever owns them. ``sandbox_launch.py`` joins it before it
becomes ``bwrap``; everything the command starts is born inside, and cannot leave (no
capabilities, and ``/sys`` is not writable inside). cgroup v1 (a ``pids`` hierarchy) and v2
(the root, when it hands the pids controller down) are both read; the group is removed when
the run ends. For other users ``sandbox_launch.py`` sets ``RLIMIT_NPROC`` instead.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path

_GROUPS = itertools.count()


@contextlib.contextmanager
def process_cap(processes: int | None) -> Iterator[list[str]]:
    """The ``cgroup.procs`` files the launcher joins: a pids cgroup of ``processes`` when the
    harness runs as root (``RLIMIT_NPROC`` does not bind root); none otherwise."""
    if processes is None or os.getuid() != 0:
        yield []
        return
    group = pids_hierarchy() / f"labkit-sandbox-{os.getpid()}-{next(_GROUPS)}"
    group.mkdir()
    try:
        (group / "pids.max").write_text(str(processes))
        yield [str(group / "cgroup.procs")]
    finally:
        _remove_group(group)


def pids_hierarchy() -> Path:
    """Where this machine's pids cgroups are made: cgroup v1's ``pids`` hierarchy, or the
    v2 root when it hands the pids controller down. OSError when neither is writable."""
    mounts = Path("/proc/self/mounts").read_text().splitlines()
    for line in mounts:
        _, point, kind, options, *_ = line.split()
        if kind == "cgroup" and "pids" in options.split(","):
            return Path(point)
    for line in mounts:
        _, point, kind, *_ = line.split()
        control = Path(point) / "cgroup.subtree_control"
        if kind == "cgroup2" and control.exists() and "pids" in control.read_text().split():
            return Path(point)
    raise OSError(errno.ENOENT, "no pids cgroup controller is mounted")


def _remove_group(group: Path) -> None:
    """Remove a spent cgroup: kill what is left in it, then retry while the kernel lets the
    processes go (at most 2 s)."""
    deadline = time.monotonic() + 2
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return  # an empty folder left behind; nothing runs in it
            with contextlib.suppress(OSError, ValueError):
                for pid in (group / "cgroup.procs").read_text().split():
                    os.kill(int(pid), 9)
            time.sleep(0.01)
