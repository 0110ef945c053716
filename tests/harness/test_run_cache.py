"""The kept test runs `make test` uses (labkit/harness/run_cache.py): a run of the same files,
command and environment is taken from the folder instead of run again, and only a run that
finished and left its tree as it was is kept. Each test run here appends a line to a file
outside its tree, so the lines count the runs that really ran."""

import contextlib
import textwrap
import threading

import pytest

from labkit.harness.pytest_run import run_pytest
from labkit.harness.run_cache import VARIABLE, every_run_runs


def tree(tmp_path, body: str) -> tuple:
    """A folder with one test file that counts its runs in ``runs.txt`` beside the folder."""
    root, runs = tmp_path / "tree", tmp_path / "runs.txt"
    (root / "tests").mkdir(parents=True)
    source = f"""
        from pathlib import Path

        def test_counted():
            with open({str(runs)!r}, "a") as runs:
                runs.write("ran\\n")
    """
    (root / "tests" / "test_counted.py").write_text(textwrap.dedent(source) + body)
    return root, runs


def ran(runs) -> int:
    return len(runs.read_text().splitlines()) if runs.exists() else 0


@pytest.fixture
def kept(tmp_path, monkeypatch):
    folder = tmp_path / "kept"
    folder.mkdir()
    monkeypatch.setenv(VARIABLE, str(folder))
    return folder


def test_a_run_of_the_same_tree_is_taken_from_the_kept_runs(tmp_path, kept):
    root, runs = tree(tmp_path, "\ndef test_fails():\n    assert 1 == 2\n")
    first = run_pytest(root, timeout=60)
    second = run_pytest(root, timeout=60)
    assert ran(runs) == 1 and len(list(kept.iterdir())) == 1
    assert (second.exit_code, second.output, second.timed_out) == (1, first.output, False)
    assert "1 failed, 1 passed" in second.output


def test_a_changed_file_or_command_runs_again(tmp_path, kept):
    root, runs = tree(tmp_path, "")
    run_pytest(root, timeout=60)
    (root / "tests" / "notes.txt").write_text("a file the tests never read still counts")
    run_pytest(root, timeout=60)
    run_pytest(root, timeout=60, tail_bytes=100)  # another command: another key
    assert ran(runs) == 3


def test_without_the_variable_every_run_runs(tmp_path, monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    root, runs = tree(tmp_path, "")
    run_pytest(root, timeout=60)
    run_pytest(root, timeout=60)
    assert ran(runs) == 2


def test_a_run_that_changes_its_tree_is_not_kept(tmp_path, kept):
    root, runs = tree(tmp_path, "\ndef test_writes():\n    Path('made.txt').write_text('x')\n")
    run_pytest(root, timeout=60)
    (root / "made.txt").unlink()  # the tree as it was before the first run
    run_pytest(root, timeout=60)
    assert ran(runs) == 2 and list(kept.iterdir()) == []


def test_a_run_that_timed_out_is_not_kept(tmp_path, kept):
    root, runs = tree(tmp_path, "\ndef test_sleeps():\n    import time; time.sleep(30)\n")
    first, second = run_pytest(root, timeout=2), run_pytest(root, timeout=2)
    assert first.timed_out and second.timed_out and ran(runs) == 2
    assert list(kept.iterdir()) == []


class Passthrough:
    """A sandbox that runs the command as it is (the Confinement protocol), counting uses."""

    def __init__(self):
        self.used = 0

    @contextlib.contextmanager
    def wrapped(self, command, root, *, env):
        self.used += 1
        yield list(command)


def test_a_run_in_a_sandbox_is_never_taken_from_the_kept_runs(tmp_path, kept):
    root, runs = tree(tmp_path, "")
    sandbox = Passthrough()
    run_pytest(root, timeout=60)  # kept, outside any sandbox
    run_pytest(root, timeout=60, sandbox=sandbox)
    run_pytest(root, timeout=60, sandbox=sandbox)
    assert sandbox.used == 2 and ran(runs) == 3


def test_a_kept_run_that_cannot_be_read_runs_again(tmp_path, kept):
    root, runs = tree(tmp_path, "")
    run_pytest(root, timeout=60)
    for path in kept.iterdir():
        path.write_text("{not json")
    again = run_pytest(root, timeout=60)
    assert ran(runs) == 2 and again.exit_code == 0


def test_runs_being_timed_always_run(tmp_path, kept):
    """Lessons 10 and 12 time runs: a kept run would take no time. Also in other threads
    (lesson 10 times subagents run at once)."""
    root, runs = tree(tmp_path, "")
    run_pytest(root, timeout=60)
    with every_run_runs():
        run_pytest(root, timeout=60)
        other = threading.Thread(target=run_pytest, args=(root,), kwargs={"timeout": 60})
        other.start()
        other.join()
    run_pytest(root, timeout=60)  # kept again afterwards
    assert ran(runs) == 3
