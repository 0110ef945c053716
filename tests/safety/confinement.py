"""Did anything reach outside the copy? File-system and process checks for the safety suite.

A hostile call is judged by its effects, not only by its return value. ``workspace()``
puts a sentinel directory beside a fresh copy of the sample, where a path traversal
or a planted symlink would lead, and fills it with files named like the sample's and
holding ``SECRET``. ``unchanged(...)`` snapshots directories before a call and compares
after, so a write anywhere in them is caught; a result that carries ``SECRET`` was read
from outside. ``processes_in(copy)`` lists live processes whose working directory is
inside the copy: what a test run left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from labkit import RepoTools, sample_copy
from labkit.recording.scenarios import OLD_LINE

SECRET = "LABKIT-SENTINEL-this-text-lives-outside-the-copy"

#: For tests that look at processes through /proc (Linux). Without it they are skipped,
#: except in CI, where a missing prerequisite must fail.
needs_proc = pytest.mark.skipif(
    not Path("/proc/self").is_dir() and os.environ.get("CI") != "true",
    reason="no /proc here: only the process group is cleaned up (see SECURITY.md)",
)


@dataclass(frozen=True)
class Workspace:
    copy: Path  # the disposable copy of the sample the tools work in
    outside: Path  # a sentinel directory beside it: the target of every escape attempt
    tools: RepoTools


@contextmanager
def workspace(*, test_timeout: float = 30.0):
    """A fresh copy with real ``RepoTools``, and a sentinel directory at ``copy/../outside``."""
    with sample_copy() as copy:
        outside = copy.parent / "outside"
        (outside / "tests").mkdir(parents=True)
        bait = f"# {SECRET}\n{OLD_LINE}\n"  # holds the text a replace_text would look for
        (outside / "secret.txt").write_text(SECRET)
        (outside / "path_rules.py").write_text(bait)
        (outside / "tests" / "test_path_rules.py").write_text(bait)
        yield Workspace(copy, outside, RepoTools(copy, test_timeout=test_timeout))


def snapshot(directory: Path) -> dict:
    """Each entry under ``directory`` (symlinks not followed): its kind and mode, and its
    bytes' digest or its link target."""
    entries = {}
    for folder, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            path = Path(folder, name)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entries[str(path.relative_to(directory))] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[str(path.relative_to(directory))] = ("file", info.st_mode, digest)
            else:
                entries[str(path.relative_to(directory))] = ("dir", info.st_mode)
    return entries


@contextmanager
def unchanged(*directories: Path):
    """Fail if anything in ``directories`` is created, removed or changed inside the block."""
    before = [snapshot(d) for d in directories]
    yield
    for directory, was in zip(directories, before):
        now = snapshot(directory)
        changed = sorted(set(was.items()) ^ set(now.items()))
        assert not changed, f"{directory} changed: {changed}"


def assert_nothing_secret(result) -> None:
    """A result (or error text) must not carry what lives outside the copy."""
    text = result if isinstance(result, str) else json.dumps(result)
    assert SECRET not in text, "a tool returned text from outside the copy"


def processes_in(directory: Path) -> list:
    """Live processes (zombies excluded) whose working directory is inside ``directory``."""
    inside = []
    root = str(Path(directory).resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or not ours to look at
            continue
        if state not in ("Z", "X") and (cwd == root or cwd.startswith(root + os.sep)):
            inside.append((int(entry.name), command.strip()))
    return inside
