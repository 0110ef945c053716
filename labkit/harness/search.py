"""Finding files and text in the workspace: ``glob`` by name, ``grep`` by content.

Both see the same files: those ``Workspace.walk`` lists (regular files, no links entered,
hidden names skipped, ``.gitignore`` not read), and both answer with paths relative to
the workspace, sorted by path. Sorted, not newest first: a replayed run must get the same
answer on a fresh copy, whose files all have new times.

``glob_files`` matches a pattern against each whole relative path: ``*`` and ``?`` stay
within one name, ``[abc]`` is a set, ``**`` stands for any number of folders (none
included). The match is a table over the pattern's and the path's parts, never a regular
expression over the path, so no pattern can make it backtrack for long.

``grep_files`` hands the search to ripgrep (``rg``, from the ``ripgrep`` package on PyPI,
pinned by the course). Its regular expressions are Rust's: they run in time linear in the
text, so a pattern such as ``(a+)+$`` cannot hang it as it would hang Python's ``re``.
Searching a folder, ripgrep walks it itself by ``walk``'s rules (its own defaults skip
hidden names and enter no link; ``--no-ignore`` stops it reading ``.gitignore``), which
is what makes a search of 10,000 files about as fast as ``grep -r`` (``bench/search.py``);
a glob's files are named to it one by one. It runs in a session of its own with a
timeout, ended whole when the time is up, so a search of a huge tree ends too. Files over
``MAX_SEARCH_BYTES`` are skipped and counted, and so are binary files (a NUL byte) that
matched. Without ``rg`` the harness still imports; ``grep`` then answers with an error
that says how to install it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sysconfig
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import metadata
from pathlib import Path

from .pytest_run import NEW_GROUP, child_environment, wait_reading
from .toolset import shown
from .workspace import Entry

MAX_SEARCH_BYTES = 1_000_000  # a file larger than this is skipped by grep, and counted
MAX_PER_FILE = 100  # matching lines read from one file
MAX_LINE = 200  # characters of a matching line shown
GREP_TIMEOUT = 10.0  # seconds a search may take
ARGUMENT_BYTES = 200_000  # paths per ripgrep run, in bytes of its command line


def find_ripgrep() -> str | None:
    """The ``rg`` program: beside this Python (where pip puts it), else where the
    ``ripgrep`` distribution says it put it (an install whose packages are shared with
    another environment), else on ``PATH``."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sysconfig.get_path("scripts")) / name
    if beside.is_file():
        return str(beside)
    try:
        recorded = metadata.distribution("ripgrep").files or []
    except metadata.PackageNotFoundError:
        recorded = []
    for file in recorded:
        if file.name == name and Path(file.locate()).is_file():
            return str(Path(file.locate()).resolve())
    return shutil.which("rg")


# --- glob ------------------------------------------------------------------------------------


def pattern_parts(pattern: object) -> tuple[str, ...]:
    """A glob pattern's parts, checked: relative, no ``..``, runs of ``**`` made one."""
    if not isinstance(pattern, str):
        raise TypeError(f"a glob pattern is a string, not {type(pattern).__name__}")
    text = pattern.replace("\\", "/")
    if not text.strip() or "\0" in text:
        raise ValueError(f"glob pattern {shown(pattern)} is empty; try '**/*.py'")
    if text.startswith("/"):
        raise ValueError(f"glob pattern {shown(pattern)} is absolute; patterns are relative")
    parts: list[str] = []
    for part in text.split("/"):
        if part == "..":
            raise ValueError(f"glob pattern {shown(pattern)} leaves the workspace ('..')")
        if part in ("", ".") or (part == "**" and parts[-1:] == ["**"]):
            continue
        parts.append(part)
    return tuple(parts)


def glob_match(parts: tuple[str, ...], path: str) -> bool:
    """Whether the relative ``path`` matches the pattern ``parts``: a table of which
    pattern parts can match which path parts (time: their product, no backtracking)."""
    names = path.split("/")
    # reach[j]: the pattern parts seen so far can match names[:j]
    reach = [True] + [False] * len(names)
    for part in parts:
        if part == "**":
            for j in range(1, len(names) + 1):
                reach[j] = reach[j] or reach[j - 1]
        else:
            reach = [False] + [reach[j] and fnmatchcase(names[j], part) for j in range(len(names))]
    return reach[-1]


def glob_files(entries: Iterable[Entry], pattern: object) -> list[str]:
    """The paths of ``entries`` that match ``pattern``, sorted."""
    parts = pattern_parts(pattern)
    return sorted(entry.path for entry in entries if glob_match(parts, entry.path))


# --- grep ------------------------------------------------------------------------------------


@dataclass
class Found:
    """What a search found: the files with a match (sorted), the matching lines (path, line
    number, text), and what it skipped."""

    files: list[str] = field(default_factory=list)
    lines: list[tuple[str, int, str]] = field(default_factory=list)
    binary: int = 0
    too_large: int = 0


class SearchError(ValueError):
    """A search that could not run: a bad pattern, no ``rg``, or out of time."""


def grep_files(
    root: Path,
    scope: str | list[Entry],
    pattern: str,
    *,
    lines: bool,
    ripgrep: str | None,
    timeout: float = GREP_TIMEOUT,
    sizes: Iterable[Entry] = (),
) -> Found:
    """Search ``scope`` under ``root`` for the regular expression ``pattern``.

    ``scope`` is a folder (relative to ``root``, ``"."`` for all), which ripgrep walks
    itself by the same rules as ``Workspace.walk`` (hidden names skipped, no link
    entered, no ignore file read); ``sizes`` are that folder's entries, walked meanwhile
    only to count the files too large to search. Or ``scope`` is the list of files to
    search (those a glob kept, or one file).
    """
    if ripgrep is None:
        raise SearchError(
            "grep needs ripgrep's rg program, which is not installed here: `pip install "
            "ripgrep==14.1.0` (the course's requirements include it). Meanwhile, glob "
            "finds files by name and read_file reads them."
        )
    found = Found()
    flags = [
        "--json",
        "--no-config",  # no RIPGREP_CONFIG_PATH: nothing can add --pre (a program to run)
        "--no-ignore",  # .gitignore and the like are not read
        "--binary",  # a binary file that matches is reported as one, whether walked or named
        "--max-filesize",
        str(MAX_SEARCH_BYTES),
        "--max-count",
        str(MAX_PER_FILE) if lines else "1",
        "--regexp",
        pattern,
        "--",
    ]
    if isinstance(scope, str):
        counter = threading.Thread(target=_count_too_large, args=(sizes, found), daemon=True)
        counter.start()
        try:
            _search(root, [ripgrep, *flags, scope], found, timeout)
        finally:
            counter.join()
    else:
        paths = [entry.path for entry in scope if entry.size <= MAX_SEARCH_BYTES]
        found.too_large = len(scope) - len(paths)
        for batch in _batches(paths):
            _search(root, [ripgrep, *flags, *batch], found, timeout)
    found.files = sorted(path.removeprefix("./") for path in found.files)
    found.lines = sorted((path.removeprefix("./"), n, text) for path, n, text in found.lines)
    return found


def _count_too_large(entries: Iterable[Entry], found: Found) -> None:
    found.too_large = sum(1 for entry in entries if entry.size > MAX_SEARCH_BYTES)


def _batches(paths: list[str]) -> Iterable[list[str]]:
    """The paths in runs whose command line stays well under the system's limit."""
    batch, size = [], 0
    for path in paths:
        if batch and size + len(path) + 1 > ARGUMENT_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(path)
        size += len(path) + 1
    if batch:
        yield batch


def _search(root: Path, command: list[str], found: Found, timeout: float) -> None:
    """Run ripgrep (in a session of its own, ended whole on a timeout) and fold its events
    into ``found``. Not under the reaper: with ``--no-config`` and neither ``--pre`` nor
    ``--search-zip``, ripgrep starts no other program, and the reaper's own start would
    cost more than the search of a small tree."""
    process = subprocess.Popen(
        command,
        cwd=root,
        env=child_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **NEW_GROUP,
    )
    errors: list[bytes] = []
    readers = [
        threading.Thread(target=_read_events, args=(process.stdout, found), daemon=True),
        threading.Thread(target=_read_tail, args=(process.stderr, errors), daemon=True),
    ]
    if wait_reading(process, readers, timeout):
        raise SearchError(f"grep was stopped after {timeout:g} s; narrow it with 'path' or 'glob'")
    if process.returncode not in (0, 1):  # 1: nothing matched
        message = b"".join(errors).decode("utf-8", errors="replace").strip()
        raise SearchError(
            f"grep could not search for {shown(command[command.index('--regexp') + 1])}: "
            + (message[-600:] or f"rg exited with {process.returncode}")
            + " (the pattern is a regular expression in Rust's syntax: escape ( [ { . * + ? "
            "with a backslash to match them as text)"
        )


def _read_events(stream, found: Found) -> None:
    """Fold ripgrep's JSON lines into ``found``: a file's matches count once its ``end``
    says it was not binary."""
    pending: list[tuple[str, int, str]] = []
    with stream:
        for raw in stream:
            try:
                event = json.loads(raw)
                kind, data = event["type"], event["data"]
            except (ValueError, KeyError, TypeError):
                continue
            if kind == "match":
                text = _text(data["lines"]).rstrip("\r\n")
                if len(text) > MAX_LINE:
                    text = text[:MAX_LINE] + " [...]"
                pending.append((_text(data["path"]), data["line_number"], text))
            elif kind == "end":
                if data.get("binary_offset") is not None:
                    found.binary += 1
                elif pending:
                    found.files.append(pending[0][0])
                    found.lines.extend(pending)
                pending = []


def _text(value: dict) -> str:
    """ripgrep's text value: ``{"text": ...}``, or ``{"bytes": base64}`` when not UTF-8."""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", errors="replace")


def _read_tail(stream, kept: list[bytes]) -> None:
    with stream:
        for block in iter(lambda: stream.read1(65536), b""):
            kept.append(block)
            del kept[:-4]
