"""Finished test runs kept by what they ran: off unless ``LABKIT_RUN_CACHE`` names a folder.

`make test` names one (a folder of its own for each run of the suite): its lessons, replays
and suggested commands run the sample's tests about 930 times on a handful of different
trees, and a finished run's exit code and output depend only on the files of its tree, the
command and the environment (pytest's durations are cut from the output). So a run is looked
up by a digest of those, and run only when it is not there.

A run is kept only if it finished on its own (no timeout, nothing left holding its output)
and left its tree as it found it; a run inside a sandbox is never looked up (it is the
sandbox's work that is being shown). Learners, their kernels and the course's recordings
never set the variable: the safety suite, which tries test runs that misbehave, unsets it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from .atomic import write_atomically

VARIABLE = "LABKIT_RUN_CACHE"
NOT_READ = {"__pycache__", ".pytest_cache"}  # what a run may leave; never what it reads


_timed = [0]  # how many every_run_runs() blocks are open in this process
_timed_lock = threading.Lock()


@contextlib.contextmanager
def every_run_runs() -> Iterator[None]:
    """Within it, in every thread of this process, no run is looked up or kept: for what
    times runs (lesson 10 times subagents one by one and at once, lesson 12 a sandboxed run
    beside a plain one)."""
    with _timed_lock:
        _timed[0] += 1
    try:
        yield
    finally:
        with _timed_lock:
            _timed[0] -= 1


def cache_folder() -> Path | None:
    """The folder ``LABKIT_RUN_CACHE`` names, if it is one (and no runs are being timed)."""
    if _timed[0]:
        return None
    named = os.environ.get(VARIABLE)
    return Path(named) if named and Path(named).is_dir() else None


def tree_digest(root: Path, command: list[str], env: dict[str, str]) -> str | None:
    """A digest of ``command``, ``env`` and every file under ``root`` (links as links), or
    None when a file cannot be read (such a run is not kept)."""
    digest = hashlib.sha256(json.dumps([command, sorted(env.items())]).encode())
    for folder, folders, names in os.walk(root):  # links to folders are not followed
        folders[:] = sorted(name for name in folders if name not in NOT_READ)
        for name in sorted(names):
            path = Path(folder, name)
            where = str(path.relative_to(root))
            try:
                if path.is_symlink():
                    digest.update(f"link {where} -> {os.readlink(path)}\0".encode())
                elif path.is_file():
                    executable = os.access(path, os.X_OK)
                    digest.update(f"file {where} {executable}\0".encode())
                    digest.update(hashlib.sha256(path.read_bytes()).digest())
            except OSError:
                return None
        for name in folders:
            digest.update(f"folder {Path(folder, name).relative_to(root)}\0".encode())
    return digest.hexdigest()


def kept_run(folder: Path, key: str) -> tuple[int, str] | None:
    """The exit code and output kept under ``key``, or None."""
    try:
        kept = json.loads((folder / f"{key}.json").read_text())
        return int(kept["exit_code"]), str(kept["output"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def keep_run(folder: Path, key: str, exit_code: int, output: str) -> None:
    """Keep a finished run under ``key`` (written whole or not at all)."""
    data = json.dumps({"exit_code": exit_code, "output": output}).encode()
    try:
        write_atomically(folder / f"{key}.json", data, mode=0o600)
    except OSError:
        pass  # a folder that cannot be written to only means the next run runs again
