"""run_command doing its job: one fresh process per call in the copy, the streams apart, the
documented timeout bounds, and ShellTools' schema. Hostile commands are in tests/safety/."""

import sys

import pytest

from labkit import sample_copy
from labkit.harness.shell import DEFAULT_TIMEOUT, MAX_TIMEOUT, SCHEMA, ShellTools, run_command


@pytest.fixture
def repo():
    with sample_copy() as root:
        yield root


def python(code):
    return [sys.executable, "-c", code]


def test_stdout_stderr_and_exit_code_come_back_apart(repo):
    run = run_command(
        repo, python("import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)")
    )
    assert (run.exit_code, run.stdout, run.stderr, run.timed_out) == (3, "out\n", "err\n", False)


def test_the_working_directory_is_the_copy(repo):
    run = run_command(repo, python("import os; print(os.getcwd())"))
    assert run.stdout == f"{repo.resolve()}\n"


def test_a_cd_in_one_call_does_not_move_the_next(repo):
    first = run_command(repo, ["sh", "-c", "cd tests && pwd"])
    assert first.stdout == f"{(repo / 'tests').resolve()}\n"
    assert run_command(repo, ["pwd"]).stdout == f"{repo.resolve()}\n"


def test_arguments_reach_the_program_untouched_by_any_shell(repo):
    words = ["; rm -rf .", "$(id)", "`id`", "*", "a && b", "> out", "~", "$HOME", "é😀"]
    run = run_command(repo, python("import sys, json; print(json.dumps(sys.argv[1:]))") + words)
    assert run.stdout == (
        '["; rm -rf .", "$(id)", "`id`", "*", "a && b", "> out", "~", '
        '"$HOME", "\\u00e9\\ud83d\\ude00"]\n'
    )
    assert sorted(p.name for p in repo.iterdir()) == ["path_rules.py", "pytest.ini", "tests"]


def test_the_sample_tests_run_through_run_command(repo):
    run = run_command(repo, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"])
    assert run.exit_code == 1 and "\n1 failed, 3 passed in " in run.stdout


def test_a_missing_program_says_there_is_no_shell(repo):
    with pytest.raises(FileNotFoundError, match="no program named 'cd'.*no shell"):
        run_command(repo, ["cd", "tests"])
    with pytest.raises(FileNotFoundError, match="no program named 'pytest; rm -rf .'"):
        run_command(repo, ["pytest; rm -rf ."])


@pytest.mark.parametrize(
    "command, error",
    [
        ("python -m pytest", "list of strings, one per argument"),
        ([], "non-empty list"),
        (["python", 3], "must be a string, not int"),
        (["python", "a\0b"], "NUL byte"),
        ([""], "program name"),
        (None, "non-empty list"),
    ],
)
def test_a_malformed_command_is_refused_with_what_to_do(repo, command, error):
    with pytest.raises((TypeError, ValueError), match=error):
        run_command(repo, command)


@pytest.mark.parametrize(
    "timeout", [0, 0.5, MAX_TIMEOUT + 1, float("nan"), float("inf"), -1, True, "10"]
)
def test_a_timeout_outside_the_documented_bounds_is_refused(repo, timeout):
    with pytest.raises((TypeError, ValueError), match="timeout"):
        run_command(repo, ["true"], timeout=timeout)


def test_the_documented_bounds():
    assert (DEFAULT_TIMEOUT, MAX_TIMEOUT) == (10.0, 60.0)
    timeout = SCHEMA["function"]["parameters"]["properties"]["timeout"]
    assert (timeout["minimum"], timeout["maximum"]) == (1, 60.0)
    assert "default 10" in timeout["description"] and "at most 60" in timeout["description"]


def test_shell_tools_add_run_command_to_the_three_tools(repo):
    names = [s["function"]["name"] for s in ShellTools.schemas]
    assert names == ["read_file", "replace_text", "run_tests", "run_command"]
    for schema in ShellTools.schemas:
        assert schema["function"]["parameters"]["additionalProperties"] is False
    tools = ShellTools(repo)
    assert tools.invoke("run_command", {"command": ["echo", "hi"]}) == {
        "exit_code": 0,
        "timed_out": False,
        "stdout": "hi\n",
        "stderr": "",
    }
    assert "def python_sources" in tools.invoke("read_file", {"path": "path_rules.py"})["content"]


@pytest.mark.parametrize(
    "arguments, error",
    [
        ({}, "takes 'command'"),
        ({"command": ["echo"], "shell": True}, "takes 'command'"),
        (["echo"], "JSON object"),
        ({"command": ["echo"], "timeout": 600}, "between 1 and 60"),
    ],
)
def test_shell_tools_refuse_malformed_arguments(repo, arguments, error):
    with pytest.raises((TypeError, ValueError), match=error):
        ShellTools(repo).invoke("run_command", arguments)


def test_python_is_the_harness_interpreter_whatever_path_holds(repo, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    run = run_command(repo, ["python", "-c", "import sys; print(sys.executable)"])
    assert run.stdout == f"{sys.executable}\n"
    tests = run_command(repo, ["python", "-m", "pytest", "-qq"])
    assert tests.exit_code == 1 and "1 failed" not in tests.stdout  # -qq: no timed summary
    assert "FAILED tests/test_path_rules.py::test_backslash" in tests.stdout
