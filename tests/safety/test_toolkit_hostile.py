"""Hostile arguments against lesson 09's toolkit, on a fresh copy of the sample.

The same sentinel set-up as ``test_hostile_arguments.py`` (``confinement.py``): a folder
beside the copy holds files named like the sample's and a secret. Whatever a call is
given, nothing outside the copy is read, listed, written or changed, and the sample's
tests (read-only in the toolkit) stay byte for byte as they were. A write *inside* the
copy is allowed (an odd name is still a name), so the copy itself is watched only for
the tools that only read.
"""

import pytest
from confinement import SECRET, assert_nothing_secret, unchanged, workspace
from sandboxes import usable
from test_hostile_arguments import HOSTILE_PATHS

from labkit import Toolkit, call_tool
from labkit.recording.scenarios import NEW_LINE, OLD_LINE

LINKS = {"to the secret": "outside/secret.txt", "to the outside folder": "outside"}
HOSTILE_GLOBS = ["../*", "../**/*", "/etc/*", "**/../../*", "..", "*/../../outside/*", "~/*"]
HOSTILE_PATTERNS = [
    "(a+)+$",  # catastrophic for a backtracking engine; linear for ripgrep's
    "x" * 100_000,  # a 100 kB pattern
    "--pre=/bin/sh",  # an option, were it not given as --regexp
    "-f/etc/passwd",
    "LABKIT\0SENTINEL",
    "(unclosed",
]


@pytest.fixture
def ws():
    with workspace() as ws:
        for name, target in LINKS.items():
            (ws.copy / name.replace(" ", "_")).symlink_to(ws.copy.parent / target)
        yield ws


@pytest.fixture
def attempt(ws, safety_tally):
    """``attempt(name, arguments, writes=False)``: one hostile call through ``call_tool``."""
    kit = Toolkit(ws.copy)
    kit.read_file("path_rules.py")  # the model has read the source: edits may go ahead

    def attempt(name, arguments, *, writes=False):
        safety_tally["hostile tool arguments"] += 1
        watched = (ws.outside, ws.copy / "tests") if writes else (ws.outside, ws.copy)
        with unchanged(*watched):
            result = call_tool(kit, name, arguments)
        assert_nothing_secret(result)
        return result

    return attempt


PATHS = {**HOSTILE_PATHS, **{f"a link {name}": name.replace(" ", "_") for name in LINKS}}


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS)
def test_no_path_reaches_outside_the_copy_or_writes_the_tests(ws, attempt, path):
    path = path.format(copy=ws.copy, outside=ws.outside)
    attempt("read_file", {"path": path})
    attempt("grep", {"pattern": "LABKIT-SENTINEL", "path": path, "output": "lines"})
    attempt("write_file", {"path": path, "content": "x = 1\n"}, writes=True)
    attempt("edit", {"path": path, "old_string": OLD_LINE, "new_string": NEW_LINE}, writes=True)


@pytest.mark.parametrize("pattern", HOSTILE_GLOBS)
def test_no_glob_lists_a_file_outside_the_copy(ws, attempt, pattern):
    result = attempt("glob", {"pattern": pattern})
    for path in result.get("files", []):
        assert (ws.copy / path).resolve().is_relative_to(ws.copy.resolve())


@pytest.mark.parametrize("pattern", HOSTILE_PATTERNS, ids=lambda p: p[:20])
def test_a_hostile_pattern_is_a_search_or_a_tool_error_never_an_option(ws, attempt, pattern):
    result = attempt("grep", {"pattern": pattern, "output": "lines"})
    assert "error" in result or result["count"] == 0
    assert not (ws.copy / "--pre=").exists()


def test_the_secret_is_found_only_where_it_is_copied_in(ws, attempt):
    """The search does work: the secret's text, once copied into the copy, is found there."""
    assert attempt("grep", {"pattern": "LABKIT-SENTINEL"})["files"] == []
    (ws.copy / "notes.txt").write_text("LABKIT-SENTINEL here\n")
    assert attempt("grep", {"pattern": "LABKIT-SENTINEL"})["files"] == ["notes.txt"]
    assert SECRET.startswith("LABKIT-SENTINEL")


def test_the_toolkits_run_command_runs_in_the_sandbox_it_is_given(ws, safety_tally):
    """Lesson 12's sandbox holds for the toolkit's shell too: a write beside the copy fails."""
    safety_tally["hostile tool arguments"] += 1
    kit = Toolkit(ws.copy, sandbox=usable("workspace-write"))
    escape = ["python", "-c", "open('../outside/secret.txt', 'w').write('changed')"]
    with unchanged(ws.outside):
        result = call_tool(kit, "run_command", {"command": escape})
    assert result["exit_code"] != 0  # the folder beside the copy is not even there inside
    assert "No such file" in result["stderr"] or "Read-only file system" in result["stderr"]
