"""The three tools doing their job. What they refuse, and faults in a test run, are in
tests/safety/."""

import pytest

from labkit import RepoTools, run_checks, sample_copy
from labkit.models.scripted import NEW_LINE, OLD_LINE


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


def test_run_tests_reports_exit_code_and_output(repo):
    result = RepoTools(repo).invoke("run_tests", {})
    assert result["exit_code"] == 1 and not result["timed_out"]
    assert result["output"].rstrip().endswith("1 failed, 3 passed")
