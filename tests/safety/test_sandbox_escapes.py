"""Escapes tried from inside lesson 12's sandbox, each judged by its effect outside.

Every case runs a real command through ``run_command`` or ``run_tests`` with the sandbox
the user chose, and checks the host afterwards: the file outside untouched, the decoy key
unread, no process left, the loopback listener never reached. Each would fail if the
sandbox were weakened (a flag dropped from the profile, a limit not set). The honest
limits are here too, as tests that show them: a hard link in the workspace, the
workspace's growth, the system files left readable. Each case counts in the safety summary.
"""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest
from sandboxes import FAKE_KEY, decoys, usable

from labkit import sample_copy
from labkit.harness.gate import Gate, Policy, allow, check_command, deny
from labkit.harness.sandbox import Limits, python_dirs
from labkit.harness.shell import ShellTools, run_command

TALLY = "sandbox escapes tried"


@pytest.fixture
def copy():
    with sample_copy() as root:
        yield root


@pytest.fixture(scope="module")
def box():
    return usable("workspace-write", Limits(processes=32, file_bytes=8 << 20, tmp_bytes=8 << 20))


def python(code: str) -> list[str]:
    return ["python", "-c", textwrap.dedent(code)]


def test_a_write_beside_the_workspace_is_refused_and_the_file_outside_untouched(
    copy, box, safety_tally
):
    target = copy.parent / "outside.txt"
    target.write_text("untouched")
    run = run_command(copy, python("open('../outside.txt', 'w').write('pwned')"), sandbox=box)
    safety_tally[TALLY] += 1
    assert "Read-only file system" in run.stderr and run.exit_code == 1
    assert target.read_text() == "untouched"
    plain = run_command(copy, python("open('../outside.txt', 'w').write('pwned')"))
    assert plain.exit_code == 0 and target.read_text() == "pwned"  # without it: written


def test_lesson_07s_escape_an_allowed_test_run_that_writes_outside_is_refused(
    copy, box, safety_tally, tmp_path
):
    target = tmp_path / "escaped.txt"
    source = copy / "path_rules.py"
    source.write_text(f"open({str(target)!r}, 'w').write('pwned')\n" + source.read_text())
    tools = ShellTools(copy, sandbox=box)
    result = tools.invoke("run_tests", {})
    shell = tools.invoke("run_command", {"command": ["python", "-m", "pytest", "-qq"]})
    safety_tally[TALLY] += 2
    assert result["exit_code"] != 0 and "No such file or directory" in result["output"]
    assert "No such file or directory" in shell["stdout"]
    assert not target.exists()


def test_the_home_folder_and_its_keys_are_not_there(copy, box, safety_tally, tmp_path):
    bait = decoys(tmp_path)
    (copy / "key_link").symlink_to(bait.key)
    reads = {
        "the key by its path": ["cat", str(bait.key)],
        "the key through a symlink in the workspace": ["cat", "key_link"],
        "the home folder's keys": ["ls", "-a", os.path.expanduser("~/.ssh")],
    }
    for what, command in reads.items():
        run = run_command(copy, command, sandbox=box)
        safety_tally[TALLY] += 1
        assert FAKE_KEY not in run.stdout, what
        assert run.exit_code != 0 and "No such file or directory" in run.stderr, what
    home = run_command(copy, ["sh", "-c", 'echo "$HOME"; ls -A "$HOME" | wc -l'], sandbox=box)
    assert home.stdout.split() == ["/tmp/home", "0"]
    real_home = run_command(copy, ["ls", "-A", os.path.expanduser("~")], sandbox=box)
    shown = set(real_home.stdout.split())  # at most the folders of the Python it runs
    assert all(any(f"/{name}" in folder for folder in python_dirs()) for name in shown), shown
    assert FAKE_KEY in run_command(copy, ["cat", "key_link"]).stdout  # without it: read


def test_an_api_key_in_another_process_of_yours_cannot_be_read_from_proc(copy, box, safety_tally):
    marker = f"LABKIT_TEST_API_KEY=sk-{uuid.uuid4().hex}"
    holder = __import__("subprocess").Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        env={**os.environ, marker.split("=")[0]: marker.split("=")[1]},
    )
    try:
        search = python(f"""
            import os
            for pid in filter(str.isdigit, os.listdir('/proc')):
                try:
                    if b{marker!r} in open(f'/proc/{{pid}}/environ', 'rb').read():
                        print('FOUND in', pid)
                except OSError:
                    pass
            print('searched', len(os.listdir('/proc')))
        """)
        boxed = run_command(copy, search, sandbox=box)
        plain = run_command(copy, search)
    finally:
        holder.kill()
        holder.wait()
    safety_tally[TALLY] += 1
    assert "FOUND" in plain.stdout  # as you, the command reads your other processes' keys
    assert "FOUND" not in boxed.stdout and "searched" in boxed.stdout
    assert boxed.stdout.count("\n") == 1


def test_no_network_the_host_loopback_and_names_are_out_of_reach(copy, box, safety_tally):
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    port = server.getsockname()[1]
    try:
        connect = python(f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {port}), 3)
                print('CONNECTED')
            except OSError as error:
                print(type(error).__name__)
        """)
        boxed = run_command(copy, connect, sandbox=box)
        dns = run_command(
            copy, python("import socket; print(socket.getaddrinfo('example.com', 80))"), sandbox=box
        )
        time.sleep(0.1)
        assert not accepted
        assert run_command(copy, connect).stdout.strip() == "CONNECTED"  # without it
    finally:
        server.close()
    safety_tally[TALLY] += 2
    assert boxed.stdout.strip() == "ConnectionRefusedError"
    assert dns.exit_code != 0 and "gaierror" in dns.stderr


def test_a_fork_bomb_is_held_to_the_process_cap(copy, box, safety_tally):
    count = run_command(
        copy,
        python("""
            import os, time
            started = 0
            for _ in range(500):
                try:
                    if os.fork() == 0:
                        time.sleep(5)
                        os._exit(0)
                    started += 1
                except OSError as error:
                    print('refused:', error.strerror)
                    break
            print('started', started)
        """),
        sandbox=box,
    )
    started = int(count.stdout.split("started ")[1])
    assert "Resource temporarily unavailable" in count.stdout and started < 32
    start = time.monotonic()
    bomb = run_command(copy, ["sh", "-c", "f() { f | f; }; f"], sandbox=box, timeout=2)
    safety_tally[TALLY] += 2
    assert "Cannot fork" in bomb.stderr and time.monotonic() - start < 30
    assert os.getuid() != 0 or not any(  # the cgroup is gone with the run
        name.startswith(f"labkit-sandbox-{os.getpid()}-")
        for name in os.listdir("/sys/fs/cgroup/pids")
        if os.path.isdir("/sys/fs/cgroup/pids")
    )


def test_a_process_left_in_the_background_does_not_outlive_the_sandbox(box, safety_tally):
    from labkit.harness.sandbox import Sandbox

    mark = f"labkit-left-behind-{uuid.uuid4().hex}"
    assert isinstance(box, Sandbox)
    with sample_copy() as copy:
        with box.wrapped(
            ["sh", "-c", f"setsid {sys.executable} -c 'import time; time.sleep(60)' {mark} &"],
            copy,
        ) as argv:
            __import__("subprocess").run(argv, timeout=30)  # no reaper: the sandbox alone
    time.sleep(0.3)
    survivors = [
        pid for pid in filter(str.isdigit, os.listdir("/proc")) if mark.encode() in _cmdline(pid)
    ]
    safety_tally[TALLY] += 1
    assert survivors == []


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read()
    except OSError:
        return b""


def test_disk_tmp_and_one_file_are_capped_the_workspace_is_not(copy, box, safety_tally):
    fill_tmp = run_command(
        copy,
        python("""
            try:
                for n in range(4):
                    open(f'/tmp/fill{n}', 'wb').write(b'x' * (4 << 20))
            except OSError as error:
                print(error.strerror)
        """),
        sandbox=box,
    )
    one_file = run_command(copy, python("open('big', 'wb').write(b'x' * (20 << 20))"), sandbox=box)
    many = run_command(
        copy,
        python("""
            for n in range(4):
                open(f'part{n}', 'wb').write(b'x' * (6 << 20))
            print('wrote 24 MiB')
        """),
        sandbox=box,
    )
    safety_tally[TALLY] += 3
    assert "No space left on device" in fill_tmp.stdout
    assert "File too large" in one_file.stderr
    # the honest limit: four files under the cap each, 24 MiB in all, three times either cap
    assert many.stdout.strip() == "wrote 24 MiB"
    assert sum((copy / f"part{n}").stat().st_size for n in range(4)) == 24 << 20


def test_the_honest_limits_a_hard_link_in_the_workspace_and_readable_system_files(
    copy, box, safety_tally, tmp_path
):
    bait = decoys(tmp_path / "x")
    os.link(bait.target, copy / "linked.txt")  # made before the run: what the workspace holds
    (copy / "passwd_link").symlink_to("/etc/passwd")
    run = run_command(copy, ["sh", "-c", "echo changed > linked.txt"], sandbox=box)
    passwd = run_command(copy, ["head", "-1", "passwd_link"], sandbox=box)
    shadow = run_command(copy, ["head", "-c", "1", "/etc/shadow"], sandbox=box)
    safety_tally[TALLY] += 3
    assert run.exit_code == 0 and bait.target.read_text() == "changed\n"
    assert passwd.stdout.startswith("root:")
    assert shadow.exit_code != 0 and shadow.stdout == ""


def test_no_privilege_inside_no_mount_no_new_namespace_no_host_processes(copy, box, safety_tally):
    checks = {
        "mount": ["sh", "-c", "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && echo MOUNTED"],
        "user namespace": ["unshare", "-U", "true"],
        "host processes": ["sh", "-c", "ls /proc | grep -c '^[0-9]'"],
        "capabilities": ["grep", "CapEff", "/proc/self/status"],
    }
    runs = {what: run_command(copy, command, sandbox=box) for what, command in checks.items()}
    safety_tally[TALLY] += len(checks)
    assert "MOUNTED" not in runs["mount"].stdout and runs["mount"].exit_code != 0
    assert runs["user namespace"].exit_code != 0
    assert int(runs["host processes"].stdout) < 10
    assert runs["capabilities"].stdout.split() == ["CapEff:", "0000000000000000"]


def test_the_read_only_profile_refuses_workspace_writes_and_none_runs_unconfined(
    copy, safety_tally
):
    read_only = usable("read-only")
    written = run_command(copy, ["sh", "-c", "echo x > new.txt"], sandbox=read_only)
    tests = ShellTools(copy, sandbox=read_only).invoke("run_tests", {})
    safety_tally[TALLY] += 2
    assert "Read-only file system" in written.stderr and not (copy / "new.txt").exists()
    assert tests["exit_code"] == 1 and "1 failed, 3 passed" in tests["output"]
    none = usable("none")
    run = run_command(copy, python("open('../outside.txt', 'w').write('x')"), sandbox=none)
    assert run.exit_code == 0 and (copy.parent / "outside.txt").exists()


# --- Nothing the model sends turns the sandbox off ---------------------------------------


def test_the_model_cannot_turn_the_sandbox_off_or_widen_it(copy, box, safety_tally):
    tools = ShellTools(copy, sandbox=box)
    escape = ["python", "-c", "open('../outside.txt', 'w').write('x')"]
    for extra in ({"sandbox": False}, {"dangerouslyDisableSandbox": True}, {"profile": "none"}):
        with pytest.raises((TypeError, ValueError)):
            tools.invoke("run_command", {"command": escape, **extra})
        safety_tally[TALLY] += 1
    (copy / ".labkit-sandbox.json").write_text('{"profile": "none", "network": true}')
    (copy / "sandbox.toml").write_text('profile = "none"\n')
    tries = [
        escape,
        ["env", "LABKIT_SANDBOX=none", "SANDBOX=off", *escape],
        ["sh", "-c", "bwrap --bind / / true && echo NESTED"],
    ]
    for command in tries:
        result = tools.invoke("run_command", {"command": command})
        safety_tally[TALLY] += 1
        assert result["exit_code"] != 0 and "NESTED" not in result["stdout"]
    assert not (copy.parent / "outside.txt").exists()
    assert tools.sandbox is box


POLICY = Policy(
    [allow("git status"), allow("git status *"), allow("python -m pytest *"), deny("rm *")],
    default="ask",
)


def test_the_reported_bypasses_the_gate_denies_them_and_the_sandbox_holds_if_one_slips(
    copy, box, safety_tally, tmp_path
):
    bait = decoys(tmp_path)
    wipe_home = ["sh", "-c", f"git status $(rm -rf {bait.home})"]
    wrapper = ["bash", "-c", f"cat {bait.key}"]
    assert check_command(POLICY, wipe_home).action == "deny"
    assert check_command(POLICY, wrapper).action == "ask"
    # a gate that let both through (a prefix rule, a hurried approval): the sandbox holds
    tools = ShellTools(copy, sandbox=box)
    for command in (wipe_home, wrapper):
        tools.invoke("run_command", {"command": command})
        safety_tally[TALLY] += 1
    assert bait.key.read_text() == FAKE_KEY + "\n" and bait.home.is_dir()
    gate = Gate(POLICY)
    assert not gate.review("run_command", {"command": wipe_home}).allowed


# --- Exercise 12a's table against the real sandbox ------------------------------------------

PROBE = """
import json, os, socket, sys, time
OUTSIDE, KEY, PORT, SKIP = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
MiB = 1 << 20

def fork_many():
    for _ in range(1000):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)

EFFECTS = {
    "read the workspace": lambda: open("path_rules.py").read(),
    "write the workspace": lambda: open("w.txt", "w").write("x"),
    "write outside the workspace": lambda: open(OUTSIDE, "w").write("x"),
    "read a key in your home": lambda: open(KEY).read(),
    "use the network": lambda: socket.create_connection(("127.0.0.1", PORT), 3),
    "start 1,000 processes": fork_many,
    "fill /tmp": lambda: [open(f"/tmp/f{n}", "wb").write(b"x" * 3 * MiB) for n in range(4)],
    "fill the workspace": lambda: [open(f"p{n}", "wb").write(b"x" * 3 * MiB) for n in range(4)],
    "read a system file": lambda: open("/etc/passwd").read(),
    "read through a hard link in the workspace": lambda: open("linked.txt").read(),
    "write through a hard link in the workspace": lambda: open("linked.txt", "w").write("x"),
}
done = {}
for effect, attempt in EFFECTS.items():
    if effect in SKIP:
        continue
    try:
        attempt()
        done[effect] = True
    except OSError:
        done[effect] = False
print(json.dumps(done))
"""


@pytest.mark.parametrize("profile", ["workspace-write", "read-only", "none"])
def test_the_exercises_table_is_what_the_real_sandbox_does(profile, tmp_path, safety_tally):
    """Exercise 12a states what each profile stops; each effect is tried for real."""
    from labkit.grading.checks.lesson12_sandbox import EFFECTS, STOPS

    box = usable(profile, Limits(processes=32, file_bytes=4 << 20, tmp_bytes=4 << 20))
    bait = decoys(tmp_path)
    server = socket.create_server(("127.0.0.1", 0))
    skip = ["start 1,000 processes"] if profile == "none" else []  # no fork bomb on the host
    with sample_copy() as copy:
        os.link(bait.target, copy / "linked.txt")
        arguments = [str(copy.parent / "outside.txt"), str(bait.key), str(server.getsockname()[1])]
        run = run_command(copy, ["python", "-c", PROBE, *arguments, *skip], sandbox=box)
    server.close()
    done = __import__("json").loads(run.stdout)
    safety_tally[TALLY] += len(done)
    assert set(done) == set(EFFECTS) - set(skip)
    assert {effect for effect, worked in done.items() if not worked} == STOPS[profile] - set(skip)


def test_nothing_of_the_starting_processs_environment_gets_in(box, safety_tally, tmp_path):
    """A grader or a batch run starts the sandbox from an environment full of keys: inside,
    only the sandbox's own variables and the caller's ``env=`` are set."""
    with box.wrapped(["env"], tmp_path, env={"GIVEN": "yes"}) as argv:
        run = __import__("subprocess").run(
            argv,
            env={**os.environ, "OPENAI_API_KEY": "sk-test-not-real"},
            capture_output=True,
            text=True,
        )
    safety_tally[TALLY] += 1
    names = {line.split("=", 1)[0] for line in run.stdout.splitlines()}
    assert names <= {"PATH", "LANG", "HOME", "TMPDIR", "GIVEN", "PWD"}, names
    assert "GIVEN" in names and "sk-test-not-real" not in run.stdout


def test_where_user_namespaces_are_refused_the_toolset_says_so_once_and_runs_nothing(
    box, safety_tally
):
    """A machine without user namespaces, played for real: the harness runs inside a bwrap
    that forbids new ones (``--disable-userns``), and asks for a sandboxed toolset there."""
    from labkit.harness.sandbox import find_bwrap

    code = textwrap.dedent("""
        from labkit.harness.sandbox import Sandbox
        from labkit.harness.shell import ShellTools
        try:
            ShellTools("/tmp", sandbox=Sandbox())
            print("MADE")
        except RuntimeError as error:
            print(type(error).__name__, error)
    """)
    outer = [find_bwrap(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    outer += ["--tmpfs", "/tmp"]
    project = Path(__file__).resolve().parents[2]
    for kept in {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), project}:
        if kept.is_relative_to("/tmp"):  # a clone or a venv in /tmp stays visible
            outer += ["--ro-bind", str(kept), str(kept)]
    outer += ["--unshare-user", "--unshare-pid", "--disable-userns", "--"]
    run = __import__("subprocess").run(
        [*outer, sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    safety_tally[TALLY] += 1
    assert run.stdout.startswith(
        "SandboxUnavailable the sandbox cannot start here: bwrap: Creating new namespace failed"
    ), run.stdout + run.stderr
    assert "MADE" not in run.stdout and "unprivileged user namespaces" in run.stdout
