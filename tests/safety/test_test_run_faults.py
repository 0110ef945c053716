"""Test-run faults: whatever the copy's tests do, run_tests returns on time, leaves no process
behind, keeps a bounded tail of the output and hands no secret to the child.

The model edits path_rules.py and pytest imports it, so a test run executes the model's
code. The tests planted here stand in for the worst that code could do. Each case counts
as one fault in the safety summary; how long a stopped run took is noted there too.
"""

import json
import os
import signal
import textwrap
import time

import pytest
from confinement import needs_proc, processes_in, workspace
from conftest import process_alive

from labkit.harness.pytest_run import FIXED_ENV, PASSED_THROUGH
from labkit.harness.tools import MAX_TEST_OUTPUT

TIMEOUT = 4.0  # seconds a planted hang is given; pytest starts in well under one
HANG = 60.0  # returning later than the timeout plus this is a hang, not a slow machine

#: Code that starts one process meant to outlive the test run and writes its pid to a file.
ESCAPES = {
    "a child in the test's process group": """
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        Path("group-child.pid").write_text(str(child.pid))
    """,
    "a child that left the process group with setsid()": """
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                 start_new_session=True)
        Path("setsid-child.pid").write_text(str(child.pid))
    """,
    "a double-forked daemon (setsid, fork, the middle process exits)": """
        middle = os.fork()
        if middle == 0:
            os.setsid()
            daemon = os.fork()
            if daemon == 0:  # keeps the output pipe open while it sleeps
                time.sleep(120)
                os._exit(0)
            Path("daemon.pid").write_text(str(daemon))
            os._exit(0)
        os.waitpid(middle, 0)
    """,
}


def plant(copy, body: str, *, then: str = "") -> None:
    """Add a test file to the copy whose one test runs ``body`` (then ``then``)."""
    code = textwrap.indent(textwrap.dedent(body) + textwrap.dedent(then), "    ")
    (copy / "tests" / "test_planted.py").write_text(
        "import json, os, subprocess, sys, time\nfrom pathlib import Path\n\n"
        f"def test_planted():\n{code}\n"
    )


def timed_run_tests(ws):
    start = time.monotonic()
    result = ws.tools.invoke("run_tests", {})
    return result, time.monotonic() - start


def assert_all_gone(copy):
    for pid_file in sorted(copy.glob("*.pid")):
        pid = int(pid_file.read_text())
        assert not process_alive(pid), f"{pid_file.stem} (pid {pid}) outlived the test run"
    assert processes_in(copy) == [], "a process started by the tests is still running in the copy"


@needs_proc
@pytest.mark.parametrize("escape", ESCAPES)
def test_no_process_outlives_a_finished_test_run(escape, safety_tally, safety_notes):
    with workspace() as ws:
        plant(ws.copy, ESCAPES[escape])
        result, seconds = timed_run_tests(ws)
        safety_tally["test-run faults injected"] += 1
        safety_notes.append(f"test run leaving {escape}: returned after {seconds:.1f} s")
        assert seconds < HANG, "an escaped process holding the output pipe stalled run_tests"
        assert not result["timed_out"] and result["output"].rstrip().endswith("1 failed, 4 passed")
        assert len(list(ws.copy.glob("*.pid"))) == 1
        assert_all_gone(ws.copy)


@needs_proc
def test_a_test_that_never_ends_is_stopped_on_time_with_all_it_started(safety_tally, safety_notes):
    with workspace(test_timeout=TIMEOUT) as ws:
        plant(ws.copy, "".join(ESCAPES.values()), then="time.sleep(600)\n")
        result, seconds = timed_run_tests(ws)
        safety_tally["test-run faults injected"] += 1
        safety_notes.append(
            f"test run that sleeps forever (and left 3 processes): returned "
            f"after {seconds:.1f} s for a {TIMEOUT:g} s timeout"
        )
        assert seconds < TIMEOUT + HANG
        assert result["timed_out"] and f"stopped after {TIMEOUT:g} s" in result["output"]
        assert len(list(ws.copy.glob("*.pid"))) == 3, "the planted test did not get to start"
        assert_all_gone(ws.copy)


@needs_proc
def test_a_process_that_clears_its_environment_and_holds_the_output_is_stopped_too(
    safety_tally, safety_notes
):
    """It leaves the group and replaces its environment: only the subreaper can find it."""
    with workspace() as ws:
        plant(
            ws.copy,
            """
            pipe = next(fd for fd in range(3, 64) if os.path.exists(f"/proc/self/fd/{fd}")
                        and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"))
            sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
            hidden = subprocess.Popen(["env", "-i", *sleeper],
                                      start_new_session=True, pass_fds=[pipe])
            Path("hidden.pid").write_text(str(hidden.pid))
        """,
        )
        result, seconds = timed_run_tests(ws)
        hidden = int((ws.copy / "hidden.pid").read_text())
        try:
            safety_tally["test-run faults injected"] += 1
            safety_notes.append(
                f"test run leaving a process with a new environment that "
                f"holds the output: returned after {seconds:.1f} s"
            )
            assert seconds < HANG and not result["timed_out"]
            assert "still running" not in result["output"]
            assert not process_alive(hidden), "a process with a new environment outlived the run"
        finally:
            if process_alive(hidden, wait=0):
                os.kill(hidden, signal.SIGKILL)


@needs_proc
def test_a_test_that_prints_50_mb_yields_only_a_bounded_tail(safety_tally, safety_notes):
    with workspace() as ws:
        plant(
            ws.copy,
            """
            line = "x" * 99 + "\\n"
            for _ in range(500):
                sys.stdout.write(line * 1000)  # 100 kB at a time, 50 MB in all
            assert False, "the loud test failed"
        """,
        )
        result, seconds = timed_run_tests(ws)
        safety_tally["test-run faults injected"] += 1
        safety_notes.append(
            f"test run printing 50 MB: returned after {seconds:.1f} s with "
            f"{len(result['output'])} characters of output"
        )
        assert not result["timed_out"] and len(result["output"]) <= MAX_TEST_OUTPUT
        assert result["output"].rstrip().endswith("2 failed, 3 passed")  # the tail, not the head
        assert processes_in(ws.copy) == []


def test_the_tail_of_the_tests_output_never_starts_inside_a_character(safety_tally):
    """A tail cut at a fixed byte could start inside '€' (three bytes) and show U+FFFD,
    which the tests never printed; shifted by one byte each time, the cut falls inside a
    character at least once, and nothing but whole characters comes back."""
    for shift in range(3):
        with workspace() as ws:
            plant(ws.copy, f"print('a' * {shift} + '€' * 3000)\nassert False")
            output = ws.tools.invoke("run_tests", {})["output"]
        safety_tally["test-run faults injected"] += 1
        assert "€" in output and "\ufffd" not in output
        assert output.rstrip().endswith("2 failed, 3 passed")


SECRETS = {
    "OLLAMA_API_KEY": "fake-ollama-key-4711",
    "OPENAI_API_KEY": "sk-fake-openai-4712",
    "GITHUB_TOKEN": "ghp_fake_token_4713",
}


def test_a_test_cannot_see_the_parents_secrets(monkeypatch, safety_tally):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    with workspace() as ws:
        plant(
            ws.copy,
            """
            Path("seen.json").write_text(json.dumps(dict(os.environ)))
        """,
        )
        result = ws.tools.invoke("run_tests", {})
        safety_tally["test-run faults injected"] += 1
        seen = json.loads((ws.copy / "seen.json").read_text())
    pytest_own = {"PYTEST_CURRENT_TEST", "PYTEST_VERSION"}
    assert set(seen) <= {*PASSED_THROUGH, *FIXED_ENV, *pytest_own}
    for value in SECRETS.values():
        assert value not in json.dumps(seen) and value not in result["output"]


#: Processes that survived the sweep before it looked past the main thread and kept going.
#: Each beats (writes a byte to a file) while it lives, and gives up by itself after 30 s,
#: so a test that fails still leaves nothing behind for long.
STUBBORN = {
    "a daemon whose main thread exited while another thread lives": """
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                import ctypes, threading
                def beat():
                    with open("survivor.beats", "ab", buffering=0) as beats:
                        for _ in range(600):
                            beats.write(b".")
                            time.sleep(0.05)
                    os._exit(0)
                threading.Thread(target=beat).start()
                ctypes.CDLL(None).pthread_exit(None)  # the main thread ends; the process lives
            os._exit(0)
        time.sleep(0.3)
    """,
    "a process that keeps forking new pids (each parent exits)": """
        chain = ("import os, time\\n"  # a small process, so that each fork is quick
                 "start = time.monotonic()\\n"
                 "beats = os.open('survivor.beats', os.O_WRONLY | os.O_CREAT | os.O_APPEND)\\n"
                 "while time.monotonic() - start < 30:\\n"
                 "    if os.fork():\\n"
                 "        os._exit(0)\\n"
                 "    os.write(beats, b'.')\\n")
        subprocess.Popen([sys.executable, "-c", chain], start_new_session=True)
        time.sleep(0.5)
    """,
}


def still_beating(copy, *, quiet=1.0) -> bool:
    """True if something still writes to survivor.beats: its size grows within ``quiet`` s."""
    beats = copy / "survivor.beats"
    before = beats.stat().st_size
    time.sleep(quiet)
    return beats.stat().st_size != before


@needs_proc
@pytest.mark.parametrize("stubborn", STUBBORN)
def test_no_stubborn_process_outlives_the_test_run(stubborn, safety_tally, safety_notes):
    with workspace() as ws:
        plant(ws.copy, STUBBORN[stubborn])
        result, seconds = timed_run_tests(ws)
        safety_tally["test-run faults injected"] += 1
        safety_notes.append(f"test run leaving {stubborn}: returned after {seconds:.1f} s")
        assert (ws.copy / "survivor.beats").exists(), "the planted process did not get to start"
        assert seconds < HANG and not result["timed_out"]
        alive = still_beating(ws.copy)
        if alive:  # let it give up by itself before the copy goes away
            time.sleep(31)
        assert not alive, f"{stubborn} outlived the test run"
