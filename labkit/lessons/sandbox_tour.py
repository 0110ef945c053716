"""Lesson 12's demonstrations: each attempt run without the sandbox, then inside it.

An attempt works in an *arena*: a fresh copy of the sample with decoys beside it, outside
the workspace, where an escape would reach: a fake home folder with ``.ssh/id_rsa``, and a
file ``outside.txt`` that says ``untouched``. Nothing of the learner's is ever the target:
where a reported attack names ``~``, the decoy home's path stands in for it.

Each attempt returns one line that reads the same on every machine (no paths, no times).
Where the sandbox cannot start, ``show_attempt`` prints what the attempt printed on a
machine where it runs (``RECORDED``, which a test holds to real runs) and says so: the
lesson shows what would have happened, and never runs the attempt unsandboxed instead.
Attempts that would harm the machine without a sandbox (a fork bomb, filling the disk) are
never run without one.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..harness.run_cache import every_run_runs
from ..harness.sample import sample_copy
from ..harness.sandbox import Limits, Sandbox, SandboxUnavailable
from ..harness.shell import ShellTools, run_command

FAKE_KEY = "FAKE-KEY-not-a-real-secret"
#: The limits of the lesson's sandbox: small, so that filling them is quick.
TOUR_LIMITS = Limits(file_bytes=8 << 20, tmp_bytes=8 << 20, processes=64)


@dataclass(frozen=True)
class Arena:
    copy: Path  # the workspace: a fresh copy of the sample
    home: Path  # a decoy home folder beside it
    key: Path  # home/.ssh/id_rsa
    outside: Path  # a file beside the workspace, saying "untouched"


@contextlib.contextmanager
def arena() -> Iterator[Arena]:
    with sample_copy() as copy:
        home = copy.parent / "home"
        (home / ".ssh").mkdir(parents=True)
        key = home / ".ssh" / "id_rsa"
        key.write_text(FAKE_KEY + "\n")
        outside = copy.parent / "outside.txt"
        outside.write_text("untouched")
        yield Arena(copy, home, key, outside)


def tour_sandbox(profile: str = "workspace-write", limits: Limits = TOUR_LIMITS) -> Sandbox | None:
    """The lesson's sandbox, checked; or None after printing the one message that says why it
    cannot start here and what the lesson does instead."""
    box = Sandbox(profile, limits)
    try:
        box.check()
    except SandboxUnavailable as exc:
        print(f"SandboxUnavailable: {exc}")
        print(
            "Nothing will run unsandboxed in its place: each attempt below shows what it did "
            "on a machine where the sandbox runs, marked 'recorded'."
        )
        return None
    print(f"the sandbox starts here: profile {box.name}, bwrap found")
    return box


# --- The attempts ------------------------------------------------------------------------------


def _said(run) -> str:
    """The last line a command wrote to stderr (or stdout), without the decoys' folders."""
    text = (run.stderr.strip() or run.stdout.strip()).splitlines()
    return text[-1].split(": ")[-1] if text else "(nothing)"


def wipe_home(a: Arena, box: Sandbox | None) -> str:
    run_command(a.copy, ["sh", "-c", f"git status $(rm -rf {a.home})"], sandbox=box)
    return f"your home (the decoy) is still there: {a.home.is_dir()}"


def bash_wrapper(a: Arena, box: Sandbox | None) -> str:
    run = run_command(a.copy, ["bash", "-c", f"cat {a.key}"], sandbox=box)
    return f"the key was read: {FAKE_KEY in run.stdout}" + (
        "" if run.exit_code == 0 else f" ({_said(run)})"
    )


def lesson_07_escape(a: Arena, box: Sandbox | None) -> str:
    tools = ShellTools(a.copy, sandbox=box)
    tools.invoke(
        "replace_text",
        {
            "old": "from pathlib import PurePosixPath",
            "new": "from pathlib import PurePosixPath\nopen('../outside.txt', 'w').write('pwned')",
        },
    )
    run = tools.invoke("run_command", {"command": ["python", "-m", "pytest", "-qq"]})
    refused = "Read-only file system" in run["stdout"]
    return (
        f"pytest's exit code {run['exit_code']}, 'Read-only file system' in its output: "
        f"{refused}; outside.txt says {a.outside.read_text()!r}"
    )


def turn_off(a: Arena, box: Sandbox | None) -> str:
    """What the model can send to turn the sandbox off: an argument, a variable, a file."""
    tools = ShellTools(a.copy, sandbox=box)
    escape = ["python", "-c", "open('../outside.txt', 'w').write('pwned')"]
    try:
        tools.invoke("run_command", {"command": escape, "sandbox": False})
        argument = "accepted"
    except (TypeError, ValueError) as exc:
        argument = "refused (" + str(exc).split(": ")[-1] + ")"
    (a.copy / ".sandbox.json").write_text('{"profile": "none", "network": true}')
    tools.invoke("run_command", {"command": ["env", "SANDBOX=off", *escape]})
    return (
        f"the argument sandbox=false: {argument}; then SANDBOX=off and a file .sandbox.json "
        f"saying 'none': outside.txt says {a.outside.read_text()!r}"
    )


def network(a: Arena, box: Sandbox | None) -> str:
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    code = (
        "import socket\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), 3)\n"
        "    print('connected to a server of yours on this machine')\n"
        "except OSError as error:\n    print(type(error).__name__)"
    )
    try:
        run = run_command(a.copy, ["python", "-c", code], sandbox=box)
    finally:
        server.close()
    return run.stdout.strip()


def read_key(a: Arena, box: Sandbox | None) -> str:
    run = run_command(a.copy, ["cat", str(a.key)], sandbox=box)
    return f"the key was read: {FAKE_KEY in run.stdout}" + (
        "" if run.exit_code == 0 else f" ({_said(run)})"
    )


def api_key(a: Arena, box: Sandbox | None) -> str:
    name, value = "LABKIT_DEMO_API_KEY", f"sk-demo-{uuid.uuid4().hex[:8]}"
    holder = subprocess.Popen(  # a process of yours with a key in its environment
        [sys.executable, "-c", "import time; time.sleep(30)"], env={**os.environ, name: value}
    )
    search = (
        "import os\nfound, seen = False, 0\n"
        "for pid in filter(str.isdigit, os.listdir('/proc')):\n    seen += 1\n    try:\n"
        f"        found |= b'{name}=' in open(f'/proc/{{pid}}/environ', 'rb').read()\n"
        "    except OSError:\n        pass\n"
        "print(found, seen <= 3)"
    )
    try:
        time.sleep(0.05)
        run = run_command(a.copy, ["python", "-c", search], sandbox=box)
    finally:
        holder.kill()
        holder.wait()
    if len(run.stdout.split()) != 2:
        return f"the search failed: {_said(run)}"
    found, own_only = run.stdout.split()
    return (
        f"its own environment has no key (lesson 07's scrub); found one in another process "
        f"of yours: {found}; sees only its own processes: {own_only}"
    )


FORK = (
    "import os, time\nstarted = 0\nfor _ in range(1000):\n    try:\n"
    "        if os.fork() == 0:\n            time.sleep(5)\n            os._exit(0)\n"
    "        started += 1\n    except OSError as error:\n"
    "        print('refused:', error.strerror)\n        break\n"
    "print('started fewer than 64:', started < 64)"
)


def fork_bomb(a: Arena, box: Sandbox | None) -> str:
    if box is None or not box.profile.isolated:
        return "not run: without a process cap this is a fork bomb on your machine"
    run = run_command(a.copy, ["python", "-c", FORK], sandbox=box)
    return "; ".join(run.stdout.strip().splitlines())


def left_behind(a: Arena, box: Sandbox | None) -> str:
    """A process sent to the background, with no reaper (lesson 07's) to end it."""
    mark = f"labkit-left-behind-{uuid.uuid4().hex}"
    command = ["sh", "-c", f"setsid {sys.executable} -c 'import time; time.sleep(60)' {mark} &"]
    with box.wrapped(command, a.copy) if box else contextlib.nullcontext(command) as argv:
        subprocess.run(argv, cwd=a.copy, timeout=30, stdout=subprocess.DEVNULL)
    time.sleep(0.2)
    left = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if mark in _cmdline(pid)]
    for pid in left:  # ours to end: the lesson started it
        with contextlib.suppress(OSError):
            os.kill(int(pid), 9)
    return f"processes still running after the command ended: {len(left)}"


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def fill_disk(a: Arena, box: Sandbox | None) -> str:
    if box is None or not box.profile.isolated:
        return "not run: without a sandbox it would fill your own disk"
    code = (
        "import sys\nMiB = 1 << 20\ndef attempt(what, write):\n    try:\n        write()\n"
        "        print(what + ': written')\n    except OSError as error:\n"
        "        print(what + ': ' + error.strerror)\n"
        "attempt('/tmp, 4 files of 3 MiB', lambda: [open(f'/tmp/f{n}', 'wb').write(b'x' * 3 * MiB)"
        " for n in range(4)])\n"
        "attempt('one file of 20 MiB', lambda: open('big', 'wb').write(b'x' * 20 * MiB))\n"
        "attempt('the workspace, 4 files of 6 MiB', lambda: [open(f'part{n}', 'wb')"
        ".write(b'x' * 6 * MiB) for n in range(4)])"
    )
    run = run_command(a.copy, ["python", "-c", code], sandbox=box)
    return "; ".join(run.stdout.strip().splitlines())


def symlinks(a: Arena, box: Sandbox | None) -> str:
    (a.copy / "key_link").symlink_to(a.key)
    (a.copy / "passwd_link").symlink_to("/etc/passwd")
    key = run_command(a.copy, ["cat", "key_link"], sandbox=box)
    passwd = run_command(a.copy, ["head", "-c", "5", "passwd_link"], sandbox=box)
    return (
        f"the key through key_link: {'read' if FAKE_KEY in key.stdout else _said(key)}; "
        f"/etc/passwd through passwd_link: {'read' if passwd.stdout == 'root:' else _said(passwd)}"
    )


def hard_link(a: Arena, box: Sandbox | None) -> str:
    os.link(a.outside, a.copy / "linked.txt")  # in the workspace before the run
    run_command(a.copy, ["sh", "-c", "echo changed > linked.txt"], sandbox=box)
    return f"outside.txt now says {a.outside.read_text().strip()!r}"


def kernel(a: Arena, box: Sandbox | None) -> str:
    run = run_command(a.copy, ["uname", "-r"], sandbox=box)
    return f"the same kernel as outside: {run.stdout.strip() == os.uname().release}"


ATTEMPTS: dict[str, Callable[[Arena, Sandbox | None], str]] = {
    "wipe_home": wipe_home,
    "bash_wrapper": bash_wrapper,
    "lesson_07_escape": lesson_07_escape,
    "turn_off": turn_off,
    "network": network,
    "read_key": read_key,
    "api_key": api_key,
    "fork_bomb": fork_bomb,
    "left_behind": left_behind,
    "fill_disk": fill_disk,
    "symlinks": symlinks,
    "hard_link": hard_link,
    "kernel": kernel,
}

#: What each attempt printed inside the workspace-write sandbox (with ``TOUR_LIMITS``) on a
#: machine where it runs: shown, marked, where the sandbox cannot start. A test compares.
RECORDED = {
    "wipe_home": "your home (the decoy) is still there: True",
    "bash_wrapper": "the key was read: False (No such file or directory)",
    "lesson_07_escape": "pytest's exit code 2, 'Read-only file system' in its output: True; "
    "outside.txt says 'untouched'",
    "turn_off": "the argument sandbox=false: refused (unexpected ['sandbox']); then SANDBOX=off "
    "and a file .sandbox.json saying 'none': outside.txt says 'untouched'",
    "network": "ConnectionRefusedError",
    "read_key": "the key was read: False (No such file or directory)",
    "api_key": "its own environment has no key (lesson 07's scrub); found one in another "
    "process of yours: False; sees only its own processes: True",
    "fork_bomb": "refused: Resource temporarily unavailable; started fewer than 64: True",
    "left_behind": "processes still running after the command ended: 0",
    "fill_disk": "/tmp, 4 files of 3 MiB: No space left on device; one file of 20 MiB: "
    "File too large; the workspace, 4 files of 6 MiB: written",
    "symlinks": "the key through key_link: No such file or directory; /etc/passwd through "
    "passwd_link: read",
    "hard_link": "outside.txt now says 'changed'",
    "kernel": "the same kernel as outside: True",
}


def show_attempt(name: str, box: Sandbox | None, *, plain: bool = True) -> None:
    """Run one attempt without the sandbox (``plain``), then in ``box``; each on a fresh
    arena. ``box`` None: the sandbox cannot start here, so the recorded line is shown."""
    if plain:
        with arena() as a:
            print(f"without the sandbox:  {ATTEMPTS[name](a, None)}")
    if box is None:
        print(f"with the sandbox:     {RECORDED[name]}  (recorded: no sandbox here)")
        return
    with arena() as a:
        print(f"with the sandbox ({box.name}): {ATTEMPTS[name](a, box)}")


def sandbox_cost(box: Sandbox, runs: int = 3) -> dict[str, float]:
    """How many times longer a sandboxed call takes than the same call without it: the
    median of ``runs`` interleaved pairs, for ``run_tests`` and for ``python -c pass``."""
    ratios = {}
    with sample_copy() as copy, every_run_runs():
        plain_tools, boxed_tools = ShellTools(copy), ShellTools(copy, sandbox=box)
        for label, call in (
            ("run_tests", lambda tools: tools.invoke("run_tests", {})),
            (
                "python -c pass",
                lambda tools: tools.invoke("run_command", {"command": ["python", "-c", "pass"]}),
            ),
        ):
            times = {"plain": [], "boxed": []}
            for _ in range(runs):
                for kind, tools in (("plain", plain_tools), ("boxed", boxed_tools)):
                    start = time.perf_counter()
                    call(tools)
                    times[kind].append(time.perf_counter() - start)
            ratios[label] = statistics.median(times["boxed"]) / statistics.median(times["plain"])
    return ratios


def profiles_side_by_side(limits: Limits = TOUR_LIMITS) -> str:
    """The profiles as a table: what bwrap is told for each, read from the options the
    sandbox really builds (for a workspace ``/ws``), and what that stops."""
    names = ["read-only", "workspace-write", "none"]
    options = {name: Sandbox(name, limits).options("/ws") for name in names}

    def cell(name: str, isolated: Callable[[list[str]], str], plain: str) -> str:
        return isolated(options[name]) if Sandbox(name).profile.isolated else plain

    def workspace(found: list[str]) -> str:
        return next(found[i] for i in range(len(found) - 1) if found[i + 1] == "/ws")

    rows = [
        ("the workspace", lambda o: workspace(o), "yours, as you"),
        ("network", lambda o: "--unshare-net" if "--unshare-net" in o else "shared", "yours"),
        ("home, /root, /work...", lambda o: "absent", "yours"),
        ("/usr, /etc, /opt...", lambda o: o[o.index("/usr") - 1], "yours"),
        ("/tmp", lambda o: f"--tmpfs, {limits.tmp_bytes >> 20} MiB", "shared"),
        ("processes", lambda o: "--unshare-pid, a cap", "yours"),
        ("environment", lambda o: "--clearenv", "scrubbed (lesson 07)"),
    ]
    width = 22
    lines = ["".ljust(width) + "".join(name.ljust(width) for name in names)]
    for label, isolated, plain in rows:
        lines.append(
            label.ljust(width) + "".join(cell(n, isolated, plain).ljust(width) for n in names)
        )
    return "\n".join(line.rstrip() for line in lines)
