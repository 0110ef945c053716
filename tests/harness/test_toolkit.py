"""The standard toolkit: six tool records, confined to the workspace, the tests read-only,
writes whole or not at all, stale edits refused, searches bounded."""

import json
import os
import time
from pathlib import Path

import pytest

from labkit import sample_copy
from labkit.harness.loop import call_tool
from labkit.harness.search import find_ripgrep, glob_match, pattern_parts
from labkit.harness.toolkit import NUDGES, ReadTools, Toolkit

FIXED = "        path = PurePosixPath(name.replace('\\\\', '/'))"
OLD = "        path = PurePosixPath(name)"


@pytest.fixture
def kit():
    with sample_copy() as root:
        yield Toolkit(root)


def run(kit, name, **arguments):
    return call_tool(kit, name, arguments)


def test_six_records_the_read_only_three_first_each_description_states_a_policy():
    assert [t.name for t in Toolkit.tools] == [
        "read_file", "glob", "grep", "write_file", "edit", "run_command",
    ]  # fmt: skip
    assert [t.read_only for t in Toolkit.tools] == [True, True, True, False, False, False]
    assert [t.name for t in ReadTools.tools] == ["read_file", "glob", "grep"]
    text = json.dumps(Toolkit.schemas)
    assert all(sentence in text for sentence in NUDGES)
    assert "Read-only" in Toolkit.edit.description and "Prefer" in Toolkit.read_file.description


def test_the_sample_can_be_repaired_with_read_file_and_edit_and_its_tests_then_pass(kit):
    assert "content" in run(kit, "read_file", path="path_rules.py")
    assert run(kit, "edit", path="path_rules.py", old_string=OLD, new_string=FIXED) == {
        "path": "path_rules.py",
        "replaced": 1,
    }
    result = run(kit, "run_command", command=["python", "-m", "pytest", "-qq"])
    assert result["exit_code"] == 0


def test_the_tests_are_read_only_for_edit_and_write_file_whatever_the_case(kit):
    run(kit, "read_file", path="tests/test_path_rules.py")
    before = (kit.root / "tests/test_path_rules.py").read_bytes()
    for name, arguments in [
        ("edit", {"path": "tests/test_path_rules.py", "old_string": "def", "new_string": "x"}),
        ("write_file", {"path": "tests/test_path_rules.py", "content": ""}),
        ("write_file", {"path": "Tests/new_test.py", "content": ""}),
        ("write_file", {"path": "./tests/../tests/x.py", "content": ""}),
    ]:
        assert "error" in run(kit, name, **arguments)
    assert (kit.root / "tests/test_path_rules.py").read_bytes() == before
    assert sorted(os.listdir(kit.root / "tests")) == ["test_path_rules.py"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", "a/../../x", "", "C:/x", "a\0b"])
def test_paths_outside_the_workspace_are_refused(kit, path):
    for name, arguments in [("read_file", {}), ("write_file", {"content": "x"})]:
        assert "error" in run(kit, name, path=path, **arguments)
    assert not (kit.root.parent / "outside.txt").exists()


def test_links_are_neither_read_nor_written_through(kit, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (kit.root / "link.txt").symlink_to(secret)
    (kit.root / "linked_dir").symlink_to(tmp_path)
    assert "a link" in run(kit, "read_file", path="link.txt")["error"]
    assert "error" in run(kit, "read_file", path="linked_dir/secret.txt")
    assert "error" in run(kit, "write_file", path="linked_dir/secret.txt", content="x")
    assert "error" in run(kit, "write_file", path="link.txt", content="x")
    assert secret.read_text() == "secret"
    assert run(kit, "glob", pattern="**/*.txt")["files"] == []  # links are not listed
    assert run(kit, "grep", pattern="secret")["files"] == []


def test_folders_are_not_files(kit):
    assert "folder" in run(kit, "read_file", path="tests")["error"]
    assert "error" in run(kit, "write_file", path="tests", content="x")


def test_write_file_creates_files_and_folders_and_leaves_no_temporary_file(kit):
    assert run(kit, "write_file", path="notes/todo.md", content="- fix\n") == {
        "path": "notes/todo.md",
        "written": 6,
        "created": True,
    }
    assert (kit.root / "notes/todo.md").read_text() == "- fix\n"
    assert os.listdir(kit.root / "notes") == ["todo.md"]


def test_an_existing_file_must_be_read_before_it_is_written_or_edited(kit):
    for name, arguments in [
        ("write_file", {"content": "x"}),
        ("edit", {"old_string": OLD, "new_string": FIXED}),
    ]:
        assert "not been read yet" in run(kit, name, path="path_rules.py", **arguments)["error"]


def test_a_stale_edit_is_refused_and_the_file_stays_byte_identical(kit):
    run(kit, "read_file", path="path_rules.py")
    source = kit.root / "path_rules.py"
    changed = source.read_bytes().replace(b"name", b"entry")  # another program's edit
    source.write_bytes(changed)
    result = run(kit, "edit", path="path_rules.py", old_string=OLD, new_string=FIXED)
    assert "changed since you last read it" in result["error"]
    assert source.read_bytes() == changed
    run(kit, "read_file", path="path_rules.py")
    stale = run(kit, "edit", path="path_rules.py", old_string=OLD, new_string=FIXED)
    assert "closest line is 10" in stale["error"] and source.read_bytes() == changed


def test_edit_keeps_crlf_line_endings_and_a_latin1_encoding(kit):
    (kit.root / "win.py").write_bytes(b"a = 1\r\nb = 'caf\xe9'\r\n")
    run(kit, "read_file", path="win.py")
    assert run(kit, "edit", path="win.py", old_string="a = 1\nb", new_string="a = 2\nb")
    assert (kit.root / "win.py").read_bytes() == b"a = 2\r\nb = 'caf\xe9'\r\n"


def test_edit_counts_replace_all_and_refuses_a_non_boolean(kit):
    run(kit, "read_file", path="path_rules.py")
    assert "error" in run(kit, "edit", path="path_rules.py", old_string="path", new_string="p")
    assert (
        "true or false"
        in run(
            kit, "edit", path="path_rules.py", old_string="x", new_string="y", replace_all="yes"
        )["error"]
    )
    result = run(kit, "edit", path="path_rules.py", old_string="selected", new_string="chosen",
                 replace_all=True)  # fmt: skip
    assert result == {"path": "path_rules.py", "replaced": 3}


@pytest.mark.parametrize(
    "pattern,path,expected",
    [
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("*.py", "a/c.py", False),
        ("src/**", "src/a/b", True),
        ("src/**/x.py", "src/x.py", True),
        ("tests/test_?.py", "tests/test_1.py", True),
        ("[ab].py", "c.py", False),
        ("**/**/**/*.md", "a/b.md", True),
    ],
)
def test_glob_patterns(pattern, path, expected):
    assert glob_match(pattern_parts(pattern), path) is expected


def test_a_pattern_of_many_stars_costs_in_proportion_to_its_length():
    """A matcher that backtracks takes time exponential in the stars (40 of them would never
    end); the table match's cost grows with the pattern and the path."""
    from growth import LINEAR_AT_8X, growth

    def match(n):
        return glob_match(pattern_parts("**/a" * n + "/x"), "/".join(["a"] * (n + 20)) + "/y")

    assert not match(40)
    assert growth(match, 5, 40) < LINEAR_AT_8X * 8  # pattern times path: at most 64-fold


def test_glob_is_sorted_skips_hidden_files_and_is_capped(kit):
    for n in range(120):
        (kit.root / f"m{n:03}.py").write_text("")
    (kit.root / ".hidden.py").write_text("")
    found = run(kit, "glob", pattern="*.py")
    assert found["count"] == 121 and len(found["files"]) == 100
    assert found["files"][:2] == ["m000.py", "m001.py"] and found["more"].startswith("and 21 more")
    assert "error" in run(kit, "glob", pattern="../*")


def test_grep_gives_files_or_numbered_lines_and_counts_what_it_skipped(kit):
    (kit.root / "blob.bin").write_bytes(b"PurePosixPath\0\1\2")
    (kit.root / "big.txt").write_bytes(b"PurePosixPath\n" * 80_000)
    files = run(kit, "grep", pattern="PurePosix")
    assert files["files"] == ["path_rules.py"] and "1 binary" in files["skipped"]
    assert "1 file(s) over 1 MB" in files["skipped"]
    lines = run(kit, "grep", pattern=r"PurePosixPath\(", output="lines")
    assert lines["lines"] == "path_rules.py:10:        path = PurePosixPath(name)\n"
    only_tests = run(kit, "grep", pattern="python_sources", path="tests", glob="**/*.py")
    assert only_tests["files"] == ["tests/test_path_rules.py"]
    assert run(kit, "grep", pattern="def", path="path_rules.py")["files"] == ["path_rules.py"]
    in_folder = run(kit, "grep", pattern="PurePosix|python_sources", path="tests/")
    assert in_folder["files"] == ["tests/test_path_rules.py"]


def test_grep_walks_as_glob_does_hidden_names_and_links_left_out(kit, tmp_path):
    (tmp_path / "secret.txt").write_text("needle\n")
    (kit.root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (kit.root / "linked").symlink_to(tmp_path)
    (kit.root / ".hidden").mkdir()
    (kit.root / ".hidden" / "a.txt").write_text("needle\n")
    (kit.root / ".env").write_text("needle\n")
    (kit.root / ".gitignore").write_text("found.txt\n")  # not read: a model could write one
    (kit.root / "deep" / "er").mkdir(parents=True)
    (kit.root / "deep" / "er" / "found.txt").write_text("needle\n")
    assert run(kit, "grep", pattern="needle")["files"] == ["deep/er/found.txt"]
    assert run(kit, "glob", pattern="**/*.txt")["files"] == ["deep/er/found.txt"]
    assert "error" in run(kit, "grep", pattern="needle", path=".env")


def test_absurdly_long_or_deep_paths_are_refused_before_any_folder_is_made(kit):
    deep = "a/" * 40 + "x.py"
    assert "and 32 parts" in run(kit, "write_file", path=deep, content="x")["error"]
    assert "at most 1000 characters" in run(kit, "read_file", path="x" * 1001)["error"]
    assert not (kit.root / "a").exists()
    assert run(kit, "write_file", path="a/" * 31 + "x.py", content="x")["created"]


def test_grep_cuts_long_output_head_and_tail(kit):
    (kit.root / "log.txt").write_text("".join(f"match {n}\n" for n in range(2000)))
    result = run(kit, "grep", pattern="match", output="lines")
    assert result["count"] == 100  # at most 100 lines of one file
    assert "match 0" in result["lines"] and "match 99" in result["lines"]
    (kit.root / "log.txt").write_text("")
    for n in range(300):
        (kit.root / f"f{n:03}.txt").write_text("match this line\n" * 3)
    many = run(kit, "grep", pattern="match", output="lines")
    assert many["count"] == 900 and "characters cut]" in many["lines"]
    assert many["lines"].startswith("f000.txt:1:")
    assert many["lines"].endswith("f299.txt:3:match this line\n")


def test_a_catastrophic_pattern_ends_at_once_and_a_bad_one_is_a_tool_error(kit):
    (kit.root / "a.txt").write_text("a" * 100_000 + "!\n")
    # ripgrep's engine has no backtracking: an answer, not the 10 s timeout's error
    assert run(kit, "grep", pattern="(a+)+$")["files"] == []
    assert "regular expression" in run(kit, "grep", pattern="(unclosed")["error"]


def test_without_ripgrep_grep_says_how_to_install_it_and_glob_still_works():
    with sample_copy() as root:
        kit = ReadTools(root, ripgrep="")
        assert "pip install ripgrep" in call_tool(kit, "grep", {"pattern": "x"})["error"]
        assert call_tool(kit, "glob", {"pattern": "*.py"})["files"] == ["path_rules.py"]


def test_a_search_that_runs_too_long_is_stopped(tmp_path):
    slow = tmp_path / "slow-rg"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    with sample_copy() as root:
        kit = ReadTools(root, ripgrep=str(slow), grep_timeout=1)
        start = time.monotonic()
        assert "stopped after 1 s" in call_tool(kit, "grep", {"pattern": "x"})["error"]
        assert time.monotonic() - start < 10


def test_ripgrep_is_found_beside_this_python():
    assert find_ripgrep() is not None


def test_ripgrep_is_found_where_its_package_put_it_when_not_beside_python(monkeypatch, tmp_path):
    """An environment that shares another's packages (as the wheel's test does) has no rg
    beside its Python and none on PATH: the ripgrep distribution's record still finds it."""
    import sysconfig

    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    found = find_ripgrep()
    assert found is not None and Path(found).name == "rg" and Path(found).is_file()
