"""The three tools the model may ask for, confined to one copy of the sample repository.

Each tool is one method of ``RepoTools`` with its description and JSON Schema above it
(``toolset.py``'s ``@tool``). The model names a tool and gives JSON arguments;
``RepoTools.invoke`` is the only way in. It refuses unknown names and malformed
arguments with ``ValueError`` or ``TypeError`` (the loop turns those into
``{"error": ...}`` results the model can read), and no argument can reach a file other
than the two it allows: each file is opened one folder at a time from ``/`` without
following any link, so a planted symlink, a symlink loop or a named pipe is refused as a
tool error, never raised. Reads are bounded: at most one byte past the cap is ever read,
and ``read_file`` can return a numbered slice of a file (``numbered_lines``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from .atomic import write_atomically
from .contracts import Confinement
from .pytest_run import run_pytest
from .sample import SOURCE_FILE, TEST_FILE
from .toolset import Toolset, shown, tool

READABLE = (SOURCE_FILE, TEST_FILE)
MAX_FILE_BYTES = 64_000  # larger than the sample will ever honestly be
MAX_TEST_OUTPUT = 2_000  # characters of pytest output the model sees
TEST_TIMEOUT = 30.0  # seconds a run_tests call may take
MAX_LINES = 200  # the longest slice read_file returns, so a read stays small by default


class RepoTools(Toolset):
    """The model's tools, working inside ``root`` (a disposable copy of the sample)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        test_timeout: float = TEST_TIMEOUT,
        sandbox: Confinement | None = None,
    ) -> None:
        """``sandbox``: where ``run_tests`` (and ``ShellTools``' ``run_command``) run their
        programs, the user's choice (lesson 12); it is checked here, once, so a sandbox that
        cannot start stops the toolset before any call rather than every call after."""
        self.root = Path(root).resolve()
        self.test_timeout = test_timeout
        if sandbox is not None:
            sandbox.check()
        self.sandbox = sandbox

    @tool(
        description=(
            "Read one file of the repository and return its text. Only two paths are "
            f"allowed: '{SOURCE_FILE}' and '{TEST_FILE}'. Read a file before you edit it. "
            "To read only part of a file, give 'offset' (the first line, from 1) and "
            "'limit' (how many lines): you get those lines, each with its number, and "
            "the file's total number of lines."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "enum": list(READABLE),
                    "description": "The file to read, relative to the repository root.",
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The first line to read, counting from 1. Leave it out to "
                    "read from the start.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LINES,
                    "description": f"How many lines to read, at most {MAX_LINES}. Read a long "
                    "file a part at a time; each line comes with its number.",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        read_only=True,
    )
    def read_file(
        self, path: str, offset: int | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """The whole file; or, given ``offset`` or ``limit``, those lines with their numbers."""
        data, info = self._read(path, allowed=READABLE)
        return file_view(path, data, info.st_size, offset, limit)

    @tool(
        description=(
            f"Edit {SOURCE_FILE} by replacing one exact piece of its text. 'old' must appear "
            "exactly once in the file, copied character for character (spaces included) from "
            "your last read_file; if it is not found, read the file again. Never edit "
            "the tests."
        ),
        parameters={
            "type": "object",
            "properties": {
                "old": {"type": "string", "description": "The exact text to replace."},
                "new": {"type": "string", "description": "The text to put in its place."},
            },
            "required": ["old", "new"],
            "additionalProperties": False,
        },
    )
    def replace_text(self, old: str, new: str) -> dict[str, Any]:
        if not old:
            raise ValueError("'old' is empty; copy the exact lines to replace from read_file")
        if len(new) > MAX_FILE_BYTES:
            raise ValueError(
                f"'new' is {len(new)} characters; an edit may be at most {MAX_FILE_BYTES}"
            )
        data, info = self._read(SOURCE_FILE, allowed=(SOURCE_FILE,))
        if info.st_size > MAX_FILE_BYTES:
            raise ValueError(
                f"{SOURCE_FILE} is {info.st_size} bytes, more than the {MAX_FILE_BYTES} "
                "an edit may work on; it is not the sample's file any more"
            )
        text = data.decode("utf-8")
        found = text.count(old)
        if found != 1:
            where = "does not occur" if found == 0 else f"occurs {found} times"
            raise ValueError(
                f"'old' {where} in {SOURCE_FILE}; it must occur exactly once. "
                "Read the file again and copy the exact text, with more "
                "surrounding lines if needed."
            )
        # atomic, through a fresh temporary file; an edit keeps the file's permissions
        write_atomically(
            self.root / SOURCE_FILE,
            text.replace(old, new, 1).encode("utf-8"),
            mode=info.st_mode & 0o777,
        )
        return {"path": SOURCE_FILE, "replaced": 1}

    @tool(
        description=(
            "Run the repository's test suite with pytest and return its exit_code (0 means "
            "every test passed) and the end of its output. Takes no arguments."
        ),
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    )
    def run_tests(self) -> dict[str, Any]:
        run = run_pytest(
            self.root, timeout=self.test_timeout, tail_bytes=MAX_TEST_OUTPUT, sandbox=self.sandbox
        )
        return {"exit_code": run.exit_code, "timed_out": run.timed_out, "output": run.output}

    def _read(self, path: str, *, allowed: tuple[str, ...]) -> tuple[bytes, os.stat_result]:
        """At most ``MAX_FILE_BYTES + 1`` bytes of an allowed file, and its ``stat``.

        Any way the file fails to be a regular, single-linked file inside the copy (a
        link, a loop of links, a pipe, a folder, gone) is an ``OSError`` the model reads.
        """
        if path not in allowed:
            raise ValueError(f"path {shown(path)} is not allowed; use one of: {', '.join(allowed)}")
        return read_regular(self.root, path)


def read_regular(root: Path, path: str) -> tuple[bytes, os.stat_result]:
    """At most ``MAX_FILE_BYTES + 1`` bytes of the file ``path`` inside ``root``, and its
    ``stat``; an ``OSError`` the model reads unless it is a regular, single-linked file
    reached without following any link."""
    refusal = OSError(
        f"{path} is not a regular file inside the repository copy (it is missing, or a link)"
    )
    try:
        fd = _open_without_links(root / path)
    except (OSError, RuntimeError, ValueError):  # ELOOP, ENOENT, ENOTDIR, a symlink loop...
        raise refusal from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            raise refusal
        return file.read(MAX_FILE_BYTES + 1), info


#: The three tools' schemas, as the model is sent them.
SCHEMAS = RepoTools.schemas


def file_view(
    path: str, data: bytes, size: int, offset: int | None, limit: int | None
) -> dict[str, Any]:
    """A ``read_file`` result for a file of ``size`` bytes whose first bytes are ``data``: the
    whole text (cut at ``MAX_FILE_BYTES``, saying so) or, given ``offset`` or ``limit``, those
    lines with their numbers."""
    text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
    if size > MAX_FILE_BYTES:
        text += f"\n[labkit: file cut at {MAX_FILE_BYTES} of {size} bytes]"
    if offset is None and limit is None:
        return {"path": path, "content": text}
    return numbered_lines(
        path,
        text,
        offset=1 if offset is None else offset,
        limit=MAX_LINES if limit is None else limit,
    )


def numbered_lines(
    path: str, text: str, *, offset: int = 1, limit: int = MAX_LINES
) -> dict[str, Any]:
    """Lines ``offset`` to ``offset + limit - 1`` of ``text`` (counting from 1), each with
    its number, as a ``read_file`` result; says how many lines the file has in all."""
    for name, value in (("offset", offset), ("limit", limit)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"read_file: '{name}' must be an integer, not {type(value).__name__}")
        if value < 1:
            raise ValueError(f"read_file: '{name}' must be at least 1, got {value}")
    if limit > MAX_LINES:
        raise ValueError(f"read_file: 'limit' may be at most {MAX_LINES}, got {limit}")
    lines = text.splitlines()
    if offset > max(len(lines), 1):
        raise ValueError(
            f"read_file: 'offset' {offset} is past the end: {path} has {len(lines)} lines"
        )
    shown = lines[offset - 1 : offset - 1 + limit]
    width = len(str(offset + len(shown) - 1))
    content = "".join(f"{offset + i:>{width}}\t{line}\n" for i, line in enumerate(shown))
    return {
        "path": path,
        "first_line": offset,
        "last_line": offset + len(shown) - 1,
        "total_lines": len(lines),
        "content": content,
    }


def _open_without_links(file: Path) -> int:
    """Open ``file`` for reading, refusing a symlink anywhere on its path.

    Each folder is opened relative to the one before with ``O_NOFOLLOW``, so no link
    is followed and nothing can be swapped between the check and the open. The file
    itself is opened non-blocking: a named pipe there makes ``open`` return at once.
    Where the system lacks this (Windows), the resolved path must equal the given one.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    if os.open not in os.supports_dir_fd or not getattr(os, "O_NOFOLLOW", 0):
        if file.resolve() != file:
            raise OSError("a link on the way")
        return os.open(file, flags | getattr(os, "O_BINARY", 0))
    *folders, name = file.parts
    fd = os.open(folders[0], flags | os.O_DIRECTORY)
    try:
        for folder in folders[1:]:
            inner = os.open(folder, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(name, flags | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
