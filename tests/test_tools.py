import time

import pytest

from labkit import RepoTools, run_checks, sample_copy
from labkit.scripted import NEW_LINE, OLD_LINE
from conftest import process_alive


@pytest.fixture
def repo():
    with sample_copy() as root:
        yield root


def test_schemas_describe_three_tools_with_no_extra_properties():
    names = [s["function"]["name"] for s in RepoTools.schemas]
    assert names == ["read_file", "replace_text", "run_tests"]
    for schema in RepoTools.schemas:
        assert schema["type"] == "function"
        assert schema["function"]["parameters"]["additionalProperties"] is False
        assert len(schema["function"]["description"]) > 40


def test_read_file_reads_the_two_allowed_files(repo):
    tools = RepoTools(repo)
    assert "def python_sources" in tools.invoke("read_file", {"path": "path_rules.py"})["content"]
    assert "def test_" in tools.invoke("read_file", {"path": "tests/test_path_rules.py"})["content"]


@pytest.mark.parametrize("path", ["../sample_repo/path_rules.py", "/etc/passwd", "~/.bashrc",
                                  "pytest.ini", "./path_rules.py", "tests\\test_path_rules.py",
                                  "path_rules.py\0", "x" * 5000])
def test_read_file_refuses_every_other_path(repo, path):
    with pytest.raises(ValueError, match="not allowed"):
        RepoTools(repo).invoke("read_file", {"path": path})


def test_read_file_refuses_a_symlink_planted_in_the_copy(repo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    target = repo / "path_rules.py"
    target.unlink()
    target.symlink_to(secret)
    with pytest.raises(OSError, match="not a regular file inside"):
        RepoTools(repo).invoke("read_file", {"path": "path_rules.py"})


def test_replace_text_changes_the_source_only_when_old_occurs_once(repo):
    tools = RepoTools(repo)
    source = repo / "path_rules.py"
    original = source.read_text()
    with pytest.raises(ValueError, match="does not occur.*Read the file again"):
        tools.invoke("replace_text", {"old": "no such text", "new": "x"})
    with pytest.raises(ValueError, match="occurs 2 times"):
        tools.invoke("replace_text", {"old": "PurePosixPath", "new": "x"})
    assert source.read_text() == original
    assert tools.invoke("replace_text", {"old": OLD_LINE, "new": NEW_LINE}) == {
        "path": "path_rules.py", "replaced": 1}
    assert NEW_LINE in source.read_text()
    assert run_checks(repo).summary == "4 passed"


@pytest.mark.parametrize("name, arguments, message", [
    ("delete_everything", {}, "unknown tool"),
    ("__init__", {}, "unknown tool"),
    ("invoke", {}, "unknown tool"),
    ("read_file", '{"path": "path_rules.py"}', "must be a JSON object"),
    ("read_file", ["path_rules.py"], "must be a JSON object"),
    ("read_file", {}, "missing"),
    ("read_file", {"path": "path_rules.py", "mode": "w"}, "unexpected"),
    ("read_file", {"path": 7}, "must be a string"),
    ("run_tests", {"flags": "-x"}, "unexpected"),
    ("replace_text", {"old": "", "new": "x"}, "empty"),
])
def test_bad_requests_are_refused_with_a_clear_error(repo, name, arguments, message):
    with pytest.raises((ValueError, TypeError), match=message):
        RepoTools(repo).invoke(name, arguments)


def test_run_tests_reports_exit_code_and_output(repo):
    result = RepoTools(repo).invoke("run_tests", {})
    assert result["exit_code"] == 1 and not result["timed_out"]
    assert result["output"].rstrip().endswith("1 failed, 3 passed")


def _plant_test(repo, body):
    (repo / "tests" / "test_planted.py").write_text(body)


def test_run_tests_kills_a_test_that_sleeps_forever_and_its_children(repo):
    _plant_test(repo, "import os, subprocess, sys, time\n"
                      "def test_hang():\n"
                      "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
                      "    open('child.pid', 'w').write(str(child.pid))\n"
                      "    time.sleep(600)\n")
    start = time.monotonic()
    result = RepoTools(repo, test_timeout=3).invoke("run_tests", {})
    assert time.monotonic() - start < 10
    assert result["timed_out"] and "stopped after 3 s" in result["output"]
    assert not process_alive(int((repo / "child.pid").read_text()))


def test_run_tests_keeps_only_the_tail_of_huge_output(repo):
    _plant_test(repo, "def test_loud():\n    print('x' * 20_000_000)\n    assert False\n")
    result = RepoTools(repo).invoke("run_tests", {})
    assert len(result["output"]) <= 2_000
    assert "failed" in result["output"]


def test_run_tests_passes_no_secrets_to_the_child(repo, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-tests")
    _plant_test(repo, "import os\ndef test_env():\n    assert 'OPENAI_API_KEY' not in os.environ, 'leaked'\n"
                      "    assert os.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] == '1'\n")
    output = RepoTools(repo).invoke("run_tests", {})["output"]
    assert "leaked" not in output and "1 failed, 4 passed" in output
