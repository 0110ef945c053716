import subprocess
import sys

from conftest import PROJECT_DIR


def labkit(*args):
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_replay_prints_the_trace_and_exits_zero():
    result = labkit("replay", "recordings/repair.json")
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "Tests before: 1 failed, 3 passed (exit code 1)" in out
    assert 'turn 1: read_file {"path": "path_rules.py"}' in out
    assert 'turn 2: read_file {"path": "tests/test_path_rules.py"}' in out
    assert "turn 3: replace_text" in out and "turn 4: run_tests {}" in out
    assert '-> {"path": "path_rules.py", "replaced": 1}' in out
    assert "Stopped: assistant_finished after 5 model turns and 4 tool calls" in out
    assert "Tests after: 4 passed (exit code 0)" in out
    assert (
        out.index("Tests before")
        < out.index("turn 1")
        < out.index("Stopped")
        < out.index("Tests after")
    )
    assert "Replay matches the recording." in out


def test_replay_with_a_smaller_budget_stops_early():
    result = labkit("replay", "recordings/repair.json", "--max-turns", "1")
    assert result.returncode == 0
    assert "Stopped: max_turns after 1 model turn and 1 tool call" in result.stdout
    assert "Tests after: 1 failed, 3 passed" in result.stdout


def test_help_explains_every_option():
    out = labkit("replay", "--help").stdout
    for option in ("--max-turns", "--loose", "--speed", "recording"):
        assert option in out


def test_replaying_a_sandboxed_recording_where_the_sandbox_cannot_start_says_so(
    monkeypatch, capsys
):
    from labkit import cli
    from labkit.harness.sandbox import Sandbox, SandboxUnavailable

    def refuse(self):
        raise SandboxUnavailable("the sandbox cannot start here: bwrap: no (exit code 1)")

    monkeypatch.setattr(Sandbox, "check", refuse)
    assert cli.main(["replay", "sandbox.json"]) == 2
    assert capsys.readouterr().err == (
        "error: the sandbox cannot start here: bwrap: no (exit code 1)\n"
    )
