"""Hostile tool arguments against the real RepoTools, on a fresh copy of the sample.

Each call goes through ``call_tool``, as the loop makes it, so a refusal is the error
result the model would read. Every case is judged by its effects as well as its answer
(see ``confinement.py``): the sentinel directory beside the copy stays byte for byte as
it was, the copy stays unchanged unless the call was a real edit, and no result carries
the sentinel's text. Each call counts as one hostile argument in the safety summary.
"""

import os
import subprocess
import sys

import pytest
from confinement import assert_nothing_secret, needs_proc, unchanged, workspace
from conftest import ListChat, call, final_text_turn, tool_turn

from labkit import agent_events, call_tool, run_checks
from labkit.harness.sample import TEST_FILE
from labkit.harness.tools import MAX_FILE_BYTES
from labkit.recording.scenarios import NEW_LINE, OLD_LINE

TEN_MB = 10 * 2**20


@pytest.fixture
def ws():
    with workspace() as ws:
        yield ws


@pytest.fixture
def attempt(ws, safety_tally):
    """``attempt(name, arguments)``: make one hostile call and check that nothing escaped."""

    def attempt(name, arguments, *, edits=False):
        safety_tally["hostile tool arguments"] += 1
        watched = (ws.outside,) if edits else (ws.outside, ws.copy)
        with unchanged(*watched):
            result = call_tool(ws.tools, name, arguments)
        assert_nothing_secret(result)
        return result

    return attempt


HOSTILE_PATHS = {
    "parent": "../outside/secret.txt",
    "parent from tests": "tests/../../outside/tests/test_path_rules.py",
    "through the file": "path_rules.py/../../outside/path_rules.py",
    "the copy by another road": "../sample_repo/path_rules.py",
    "absolute": "/etc/passwd",
    "absolute, inside the copy": "{copy}/path_rules.py",
    "absolute, to the sentinel": "{outside}/secret.txt",
    "home": "~/.bashrc",
    "another user's home": "~root/.profile",
    "NUL after the name": "path_rules.py\0",
    "NUL then traversal": "path_rules.py\0/../../outside/secret.txt",
    "very long": "a/" * 50_000 + "path_rules.py",
    "backslashes": "tests\\test_path_rules.py",
    "backslash traversal": "..\\outside\\secret.txt",
    "URL-encoded dots": "%2e%2e/outside/secret.txt",
    "URL-encoded slash": "tests%2Ftest_path_rules.py",
    "file URL": "file:///etc/passwd",
    "dot prefix": "./path_rules.py",
    "double slash": "tests//test_path_rules.py",
    "trailing space": "path_rules.py ",
    "upper case": "PATH_RULES.PY",
    "Cyrillic a": "p\u0430th_rules.py",
    "one-dot leader for the dot": "path_rules\u2024py",
    "fullwidth solidus": "tests\uff0ftest_path_rules.py",
    "division slash": "tests\u2215test_path_rules.py",
    "zero-width space": "path_rules.py\u200b",
    "fullwidth dots": "\uff0e\uff0e/outside/secret.txt",
    "empty": "",
    "the copy itself": ".",
    "a directory": "tests",
}


@pytest.mark.parametrize("path", HOSTILE_PATHS.values(), ids=HOSTILE_PATHS)
def test_read_file_refuses_every_path_but_the_two_it_allows(ws, attempt, path):
    result = attempt("read_file", {"path": path.format(copy=ws.copy, outside=ws.outside)})
    assert "not allowed" in result["error"] and "path_rules.py" in result["error"]
    assert len(result["error"]) < 400  # a 100 kB path is not echoed back whole


@pytest.mark.parametrize(
    "name",
    [
        "__init__",
        "invoke",
        "schemas",
        "__class__",
        "_handlers",
        "root",
        "test_timeout",
        "_confined",
        "__dict__",
        "__getattribute__",
        "read_file.__globals__",
        "delete_everything",
        "",
        "READ_FILE",
        " read_file",
        "run_tests\0",
        None,
        7,
        ["read_file"],
        {"name": "run_tests"},
    ],
)
def test_a_tool_name_never_reaches_an_attribute(attempt, name):
    result = attempt(name, {})
    assert result["error"].startswith("unknown tool")
    assert "the tools are: read_file, replace_text, run_tests" in result["error"]


@pytest.mark.parametrize(
    "name, arguments, message",
    [
        ("read_file", None, "must be a JSON object"),
        ("read_file", '{"path": "path_rules.py"}', "must be a JSON object"),
        ("read_file", ["path_rules.py"], "must be a JSON object"),
        ("read_file", 7, "must be a JSON object"),
        ("read_file", {}, "missing ['path']"),
        ("read_file", {"Path": "path_rules.py"}, "unexpected ['Path']"),
        ("read_file", {"path": "path_rules.py", "mode": "w"}, "unexpected ['mode']"),
        ("read_file", {"path": "path_rules.py", "self": None}, "unexpected ['self']"),
        ("read_file", {"path": 7}, "'path' must be a string"),
        ("read_file", {"path": None}, "'path' must be a string"),
        ("read_file", {"path": True}, "'path' must be a string"),
        ("read_file", {"path": ["path_rules.py"]}, "'path' must be a string"),
        ("read_file", {"path": {"path": "path_rules.py"}}, "'path' must be a string"),
        ("replace_text", {"old": OLD_LINE}, "missing ['new']"),
        ("replace_text", {"new": NEW_LINE}, "missing ['old']"),
        (
            "replace_text",
            {"old": OLD_LINE, "new": NEW_LINE, "path": "/etc/passwd"},
            "unexpected ['path']",
        ),
        (
            "replace_text",
            {"old": OLD_LINE, "new": NEW_LINE, "file": "tests/test_path_rules.py"},
            "unexpected ['file']",
        ),
        ("replace_text", {"old": 1, "new": 2}, "must be a string"),
        ("replace_text", {"old": OLD_LINE, "new": None}, "'new' must be a string"),
        ("replace_text", {"old": "", "new": "x"}, "'old' is empty"),
        ("run_tests", {"flags": "-x"}, "unexpected ['flags']"),
        ("run_tests", {"timeout": 0}, "unexpected ['timeout']"),
        ("run_tests", {"args": ["--collect-only"]}, "unexpected ['args']"),
        ("run_tests", [], "must be a JSON object"),
    ],
)
def test_malformed_arguments_are_refused_with_what_to_send_instead(
    attempt, name, arguments, message
):
    assert message in attempt(name, arguments)["error"]


def test_a_10_mb_new_text_is_refused(attempt):
    result = attempt("replace_text", {"old": OLD_LINE, "new": "x" * TEN_MB})
    assert f"at most {MAX_FILE_BYTES}" in result["error"]


def test_a_10_mb_old_text_is_not_found(attempt):
    assert "does not occur" in attempt("replace_text", {"old": "x" * TEN_MB, "new": "y"})["error"]


def test_text_the_file_cannot_hold_changes_nothing(attempt):
    result = attempt("replace_text", {"old": OLD_LINE, "new": "\ud800"})  # a lone surrogate
    assert "surrogates not allowed" in result["error"]  # and no temporary file is left behind


def test_old_equal_to_the_whole_file_replaces_just_that_file(ws, attempt):
    source = ws.copy / "path_rules.py"
    mode = source.stat().st_mode
    with unchanged(ws.copy / "tests"):
        result = attempt("replace_text", {"old": source.read_text(), "new": "X = 1\n"}, edits=True)
    assert result == {"path": "path_rules.py", "replaced": 1}
    assert source.read_text() == "X = 1\n" and source.stat().st_mode == mode
    assert sorted(p.name for p in ws.copy.iterdir()) == ["path_rules.py", "pytest.ini", "tests"]


def test_an_edit_that_breaks_the_syntax_is_allowed_and_the_next_test_run_says_so(ws, safety_tally):
    safety_tally["hostile tool arguments"] += 1
    broken = OLD_LINE[:-1]  # "path = PurePosixPath(name": an unclosed parenthesis
    chat = ListChat(
        tool_turn(call("replace_text", old=OLD_LINE, new=broken)),
        tool_turn(call("run_tests")),
        final_text_turn("Fixed, all tests pass."),
    )
    with unchanged(ws.outside, ws.copy / "tests"):
        events = list(agent_events(chat, ws.tools, "repair it"))
    results = [e["result"] for e in events if e["type"] == "tool_result"]
    assert results[0] == {"path": "path_rules.py", "replaced": 1}
    assert results[1]["exit_code"] == 2 and "SyntaxError" in results[1]["output"]
    assert events[-1]["reason"] == "assistant_finished"  # the claim is the model's, not a fact:
    assert run_checks(ws.copy).passed == 0  # the independent check says otherwise


# Files planted in the copy, as code run by the tests could plant them.


def test_a_symlinked_source_file_is_neither_read_nor_written_through(ws, attempt):
    (ws.copy / "path_rules.py").unlink()
    (ws.copy / "path_rules.py").symlink_to(ws.outside / "path_rules.py")
    assert "not a regular file inside" in attempt("read_file", {"path": "path_rules.py"})["error"]
    result = attempt("replace_text", {"old": OLD_LINE, "new": NEW_LINE})
    assert "not a regular file inside" in result["error"]


def test_a_symlinked_tests_folder_is_not_read_through(ws, attempt):
    tests = ws.copy / "tests"
    tests.rename(ws.copy / "tests-moved")
    tests.symlink_to(ws.outside / "tests")
    result = attempt("read_file", {"path": "tests/test_path_rules.py"})
    assert "not a regular file inside" in result["error"]


def test_a_copy_swapped_for_a_symlink_after_the_tools_were_made_is_refused(ws, attempt):
    ws.copy.rename(ws.copy.with_name("moved"))
    ws.copy.symlink_to(ws.outside)  # same path, now leading to the sentinel
    assert "not a regular file inside" in attempt("read_file", {"path": "path_rules.py"})["error"]
    result = attempt("replace_text", {"old": OLD_LINE, "new": NEW_LINE})
    assert "not a regular file inside" in result["error"]


def test_a_hard_link_to_a_file_outside_is_neither_read_nor_written(ws, attempt):
    (ws.copy / "path_rules.py").unlink()
    os.link(ws.outside / "path_rules.py", ws.copy / "path_rules.py")
    assert "a link" in attempt("read_file", {"path": "path_rules.py"})["error"]
    assert "a link" in attempt("replace_text", {"old": OLD_LINE, "new": NEW_LINE})["error"]


@pytest.mark.parametrize("planted", ["path_rules.py.labkit-tmp", ".path_rules.py.labkit-tmp"])
def test_an_edit_does_not_write_through_a_symlink_planted_where_a_temporary_file_might_go(
    ws, attempt, planted
):
    (ws.copy / planted).symlink_to(ws.outside / "secret.txt")
    result = attempt("replace_text", {"old": OLD_LINE, "new": NEW_LINE}, edits=True)
    assert result == {"path": "path_rules.py", "replaced": 1}
    source = ws.copy / "path_rules.py"
    assert not source.is_symlink() and NEW_LINE in source.read_text()
    assert (ws.copy / planted).is_symlink()  # left as it was


def test_a_named_pipe_in_place_of_the_source_is_refused_without_blocking(ws, attempt):
    (ws.copy / "path_rules.py").unlink()
    os.mkfifo(ws.copy / "path_rules.py")  # reading it would wait for a writer forever
    assert "not a regular file inside" in attempt("read_file", {"path": "path_rules.py"})["error"]


def test_a_missing_source_file_is_a_clear_error(ws, attempt):
    (ws.copy / "path_rules.py").unlink()
    result = attempt("replace_text", {"old": OLD_LINE, "new": NEW_LINE})
    assert "path_rules.py is not a regular file inside the repository copy" in result["error"]


def test_a_10_mb_source_file_is_read_back_cut_short(ws, attempt):
    (ws.copy / "path_rules.py").write_text("#" * TEN_MB)
    result = attempt("read_file", {"path": "path_rules.py"})
    assert len(result["content"]) < MAX_FILE_BYTES + 100
    assert result["content"].endswith(f"[labkit: file cut at {MAX_FILE_BYTES} of {TEN_MB} bytes]")


def test_a_source_file_that_is_not_utf8_is_read_with_replacements_and_not_edited(ws, attempt):
    (ws.copy / "path_rules.py").write_bytes(b"x = '\xff\xfe'\n" + OLD_LINE.encode())
    assert "\ufffd" in attempt("read_file", {"path": "path_rules.py"})["content"]
    result = attempt("replace_text", {"old": OLD_LINE, "new": NEW_LINE})
    assert "can't decode byte 0xff" in result["error"]


def test_a_symlink_loop_planted_as_the_source_is_a_tool_error(ws, attempt):
    source = ws.copy / "path_rules.py"
    source.unlink()
    source.symlink_to("path_rules.py")  # points at itself: resolving it never ends
    for name, arguments in (
        ("read_file", {"path": "path_rules.py"}),
        ("replace_text", {"old": OLD_LINE, "new": NEW_LINE}),
    ):
        assert "not a regular file inside" in attempt(name, arguments)["error"]


def test_a_symlink_loop_through_the_tests_folder_is_a_tool_error(ws, attempt):
    tests = ws.copy / "tests"
    tests.rename(ws.copy / "tests-moved")
    tests.symlink_to("tests")
    assert "not a regular file inside" in attempt("read_file", {"path": TEST_FILE})["error"]


def test_a_symlink_loop_stops_the_loop_with_a_named_reason(ws, safety_tally):
    safety_tally["hostile tool arguments"] += 1
    (ws.copy / "path_rules.py").unlink()
    (ws.copy / "path_rules.py").symlink_to("path_rules.py")
    chat = ListChat(tool_turn(call("read_file", path="path_rules.py")), final_text_turn("stuck"))
    events = list(agent_events(chat, ws.tools, "repair it"))
    assert "error" in next(e for e in events if e["type"] == "tool_result")["result"]
    assert events[-1]["type"] == "stopped" and events[-1]["reason"] == "assistant_finished"


SPARSE_READ = """
import resource, sys
from labkit import RepoTools, call_tool
tools = RepoTools(sys.argv[1])
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
limit = size + 256 * 2**20  # a read of the whole file would need 4 GiB more than this
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
result = call_tool(tools, "read_file", {"path": "path_rules.py"})
print(len(result["content"]), result["content"][-60:])
"""


@needs_proc
def test_a_sparse_4_gib_source_file_is_read_within_bounded_memory(ws, safety_tally):
    """Run in a child with its address space capped 256 MB above its size at start."""
    safety_tally["hostile tool arguments"] += 1
    with open(ws.copy / "path_rules.py", "r+b") as file:
        file.truncate(4 * 2**30)  # 4 GiB that take no disk
    run = subprocess.run(
        [sys.executable, "-c", SPARSE_READ, str(ws.copy)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-600:]
    assert f"file cut at {MAX_FILE_BYTES} of {4 * 2**30} bytes" in run.stdout


@pytest.mark.parametrize(
    "name, arguments",
    [
        ("x" * 100_000, {}),
        ("read_file", {"k" * 100_000: "path_rules.py"}),
        ("read_file", {"path": "path_rules.py", **{f"key{n}": "v" for n in range(10_000)}}),
        ("replace_text", {"old": 1, "new": "x", "o" * 100_000: 2}),
        ("read_file", {"p" * 100_000: 7}),
    ],
)
def test_error_texts_cut_long_names_and_keys(attempt, name, arguments):
    assert len(attempt(name, arguments)["error"]) < 600


def test_a_source_file_larger_than_an_edit_may_handle_is_refused_unread(ws, safety_tally):
    safety_tally["hostile tool arguments"] += 1
    source = ws.copy / "path_rules.py"
    with open(source, "r+b") as file:
        file.truncate(4 * 2**30)  # sparse: read whole, it would need 4 GiB of memory
    before = source.stat()
    with unchanged(ws.outside):  # (the copy is not snapshot: that would read the 4 GiB)
        result = call_tool(ws.tools, "replace_text", {"old": "x", "new": "y"})
    assert f"is {4 * 2**30} bytes, more than the {MAX_FILE_BYTES}" in result["error"]
    assert source.stat().st_mtime_ns == before.st_mtime_ns and source.stat().st_ino == before.st_ino
