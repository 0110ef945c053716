"""Put this process under the sandbox's limits, then become the sandbox (Linux):
``python -I -S sandbox_launch.py LIMITS_JSON BWRAP ARGS...``.

``LIMITS_JSON`` holds ``rlimits`` (resource name to its value, e.g. ``{"RLIMIT_CPU": 60}``),
``cgroups`` (the ``cgroup.procs`` files this process joins first: a pids cgroup caps how
many processes the whole sandbox may hold at once) and ``processes`` (for a user other
than root, how many processes *more* than the user already runs: ``RLIMIT_NPROC`` counts
every process of the user on the machine, so it is set to that count plus the limit).

The limits are inherited by ``bwrap`` and by everything it starts; the command inside
cannot raise a hard limit, nor leave the cgroup (it has no capabilities and cannot write
``/sys``). ``RLIMIT_CPU`` gets a hard limit one second above the soft one: SIGXCPU first,
then SIGKILL. This file imports only the standard library and runs isolated (``-I -S``),
like ``reaper.py``: nothing in the workspace can stand in for it. It ``exec``s, so no
Python process stays between the harness and the sandbox.
"""

from __future__ import annotations

import json
import os
import resource
import sys


def processes_of(uid: int) -> int:
    """How many processes the user ``uid`` runs on this machine (read from ``/proc``)."""
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:  # gone meanwhile
                continue
    return count


def apply(limits: dict) -> None:
    """Join the cgroups, then set every limit (hard and soft) in this process."""
    for procs in limits.get("cgroups", []):
        with open(procs, "w") as file:
            file.write(str(os.getpid()))
    for name, value in limits.get("rlimits", {}).items():
        hard = value + 1 if name == "RLIMIT_CPU" else value
        resource.setrlimit(getattr(resource, name), (value, hard))
    extra = limits.get("processes")
    if extra is not None and os.getuid() != 0:  # the kernel never applies it to root
        allowed = processes_of(os.getuid()) + extra
        resource.setrlimit(resource.RLIMIT_NPROC, (allowed, allowed))


def main(arguments: list[str]) -> None:
    limits, command = json.loads(arguments[0]), arguments[1:]
    apply(limits)
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
