"""The three tools doing their job. What they refuse, and faults in a test run, are in
tests/safety/."""

import pytest

from labkit import RepoTools, run_checks, sample_copy
from labkit.harness.tools import numbered_lines
from labkit.recording.scenarios import NEW_LINE, OLD_LINE


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
        "path": "path_rules.py",
        "replaced": 1,
    }
    assert NEW_LINE in source.read_text()
    assert run_checks(repo).summary == "4 passed"


def test_run_tests_reports_exit_code_and_output(repo):
    result = RepoTools(repo).invoke("run_tests", {})
    assert result["exit_code"] == 1 and not result["timed_out"]
    assert result["output"].rstrip().endswith("1 failed, 3 passed")


def test_read_file_with_offset_or_limit_gives_numbered_lines_and_the_total(repo):
    tools = RepoTools(repo)
    whole = tools.invoke("read_file", {"path": "path_rules.py"})
    assert set(whole) == {"path", "content"}  # without them: the file as before
    part = tools.invoke("read_file", {"path": "tests/test_path_rules.py", "offset": 13, "limit": 2})
    assert part == {
        "path": "tests/test_path_rules.py",
        "first_line": 13,
        "last_line": 14,
        "total_lines": 18,
        "content": "13\tdef test_backslash_names_are_accepted_and_normalised():\n"
        '14\t    assert python_sources(["src\\\\api\\\\routes.py"]) == '
        '["src/api/routes.py"]\n',
    }
    rest = tools.invoke("read_file", {"path": "path_rules.py", "offset": 12})
    assert (
        rest["content"]
        == "12\t            selected.append(path.as_posix())\n13\t    return selected\n"
    )
    head = tools.invoke("read_file", {"path": "path_rules.py", "limit": 1})
    assert (head["first_line"], head["last_line"], head["total_lines"]) == (1, 1, 13)


@pytest.mark.parametrize(
    "arguments, error",
    [
        ({"offset": "6"}, "'offset' must be an integer"),
        ({"limit": True}, "'limit' must be an integer"),
        ({"offset": 0}, "at least 1"),
        ({"offset": 14}, "past the end: path_rules.py has 13 lines"),
        ({"limit": 500}, "at most 200"),
    ],
)
def test_a_bad_offset_or_limit_is_refused_with_what_to_do(repo, arguments, error):
    with pytest.raises((TypeError, ValueError), match=error):
        RepoTools(repo).invoke("read_file", {"path": "path_rules.py", **arguments})


def test_the_read_file_description_tells_the_model_how_to_read_a_part():
    read_file = RepoTools.schemas[0]["function"]
    assert set(read_file["parameters"]["properties"]) == {"path", "offset", "limit"}
    assert read_file["parameters"]["required"] == ["path"]
    assert "'offset'" in read_file["description"] and "'limit'" in read_file["description"]


def test_numbered_lines_gives_a_slice_with_line_numbers_and_the_total():
    text = "".join(f"line {n}\n" for n in range(1, 13))
    assert numbered_lines("f.py", text, offset=9, limit=3) == {
        "path": "f.py",
        "first_line": 9,
        "last_line": 11,
        "total_lines": 12,
        "content": " 9\tline 9\n10\tline 10\n11\tline 11\n",
    }
    assert numbered_lines("f.py", text, offset=12, limit=50)["content"] == "12\tline 12\n"


def test_numbered_lines_refuses_bad_offsets_with_what_to_do():
    text = "a\nb\n"
    with pytest.raises(ValueError, match="past the end: f.py has 2 lines"):
        numbered_lines("f.py", text, offset=3)
    with pytest.raises(ValueError, match="at least 1"):
        numbered_lines("f.py", text, offset=0)
    with pytest.raises(TypeError, match="integer"):
        numbered_lines("f.py", text, limit="5")
    with pytest.raises(ValueError, match="at most 200"):
        numbered_lines("f.py", text, limit=10_000)
    assert numbered_lines("empty.py", "")["content"] == ""
