"""The three tools the model may ask for, confined to one copy of the sample repository.

The model names a tool and gives JSON arguments; ``RepoTools.invoke`` is the only
way in. It refuses unknown names and malformed arguments with ``ValueError`` or
``TypeError`` (the loop turns those into ``{"error": ...}`` results the model can
read), and no argument can reach a file other than the two it allows: each file is
opened one folder at a time from ``/`` without following any link, so a planted
symlink, a symlink loop or a named pipe is refused as a tool error, never raised.
Reads are bounded: at most one byte past the cap is ever read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .atomic import write_atomically
from .budget import MAX_LINES, READ_RANGE_PROPERTIES, numbered_lines
from .pytest_run import run_pytest
from .sample import SOURCE_FILE, TEST_FILE

READABLE = (SOURCE_FILE, TEST_FILE)
MAX_FILE_BYTES = 64_000  # larger than the sample will ever honestly be
MAX_TEST_OUTPUT = 2_000  # characters of pytest output the model sees
TEST_TIMEOUT = 30.0  # seconds a run_tests call may take

SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": (
                "Read one file of the repository and return its text. Only two paths are "
                f"allowed: '{SOURCE_FILE}' and '{TEST_FILE}'. Read a file before you edit it. "
                "To read only part of a file, give 'offset' (the first line, from 1) and "
                "'limit' (how many lines): you get those lines, each with its number, and "
                "the file's total number of lines."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "enum": list(READABLE),
                        "description": "The file to read, relative to the repository root.",
                    },
                    **READ_RANGE_PROPERTIES,
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "replace_text",
            "description": (
                f"Edit {SOURCE_FILE} by replacing one exact piece of its text. 'old' must appear "
                "exactly once in the file, copied character for character (spaces included) from "
                "your last read_file; if it is not found, read the file again. Never edit "
                "the tests."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "old": {"type": "string", "description": "The exact text to replace."},
                    "new": {"type": "string", "description": "The text to put in its place."},
                },
                "required": ["old", "new"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_tests",
            "description": (
                "Run the repository's test suite with pytest and return its exit_code (0 means "
                "every test passed) and the end of its output. Takes no arguments."
            ),
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
]


class RepoTools:
    """The model's tools, working inside ``root`` (a disposable copy of the sample)."""

    schemas = SCHEMAS

    def __init__(self, root, *, test_timeout: float = TEST_TIMEOUT):
        self.root = Path(root).resolve()
        self.test_timeout = test_timeout
        self._handlers = {
            "read_file": self.read_file,
            "replace_text": self.replace_text,
            "run_tests": self.run_tests,
        }

    def invoke(self, name, arguments):
        """Run the tool called ``name`` with a dict of ``arguments`` and return its result."""
        handler = self._handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            raise ValueError(
                f"unknown tool {_shown(name)}; the tools are: {', '.join(self._handlers)}"
            )
        if not isinstance(arguments, dict):
            raise TypeError(
                f"arguments for {name} must be a JSON object, not {type(arguments).__name__}"
            )
        _check_arguments(name, arguments)
        return handler(**arguments)

    def read_file(self, path, offset=None, limit=None):
        """The whole file; or, given ``offset`` or ``limit``, those lines with their numbers."""
        data, info = self._read(path, allowed=READABLE)
        text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
        if info.st_size > MAX_FILE_BYTES:
            text += f"\n[labkit: file cut at {MAX_FILE_BYTES} of {info.st_size} bytes]"
        if offset is None and limit is None:
            return {"path": path, "content": text}
        return numbered_lines(
            path,
            text,
            offset=1 if offset is None else offset,
            limit=MAX_LINES if limit is None else limit,
        )

    def replace_text(self, old, new):
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

    def run_tests(self):
        run = run_pytest(self.root, timeout=self.test_timeout, tail_bytes=MAX_TEST_OUTPUT)
        return {"exit_code": run.exit_code, "timed_out": run.timed_out, "output": run.output}

    def _read(self, path, *, allowed) -> tuple[bytes, os.stat_result]:
        """At most ``MAX_FILE_BYTES + 1`` bytes of an allowed file, and its ``stat``.

        Any way the file fails to be a regular, single-linked file inside the copy (a
        link, a loop of links, a pipe, a folder, gone) is an ``OSError`` the model reads.
        """
        if path not in allowed:
            raise ValueError(
                f"path {_shown(path)} is not allowed; use one of: {', '.join(allowed)}"
            )
        refusal = OSError(
            f"{path} is not a regular file inside the repository copy (it is missing, or a link)"
        )
        try:
            fd = _open_without_links(self.root / path)
        except (OSError, RuntimeError, ValueError):  # ELOOP, ENOENT, ENOTDIR, a symlink loop...
            raise refusal from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                raise refusal
            return file.read(MAX_FILE_BYTES + 1), info


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


def _shown(value, limit: int = 200) -> str:
    """``repr(value)``, cut to ``limit`` characters: an error text never echoes 100 kB back."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _check_arguments(name: str, arguments: dict) -> None:
    parameters = next(s["function"]["parameters"] for s in SCHEMAS if s["function"]["name"] == name)
    expected = set(parameters["properties"])
    extra = set(arguments) - expected
    missing = set(parameters.get("required", [])) - set(arguments)
    if extra or missing:
        problems = [
            f"unexpected {_shown(sorted(extra))}" if extra else "",
            f"missing {sorted(missing)}" if missing else "",
        ]
        raise TypeError(
            f"{name} takes {sorted(expected) or 'no arguments'}: "
            + "; ".join(p for p in problems if p)
        )
    for key, value in arguments.items():
        # strings are checked here; numbers where they are used (numbered_lines)
        if parameters["properties"][key]["type"] == "string" and not isinstance(value, str):
            raise TypeError(f"{name}: {_shown(key)} must be a string, not {type(value).__name__}")
