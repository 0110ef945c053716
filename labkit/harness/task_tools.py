"""The tools of a task-set attempt (lesson 14): read, edit and test one task's repository.

The same three tools as the sample's (``tools.py``), for any task of ``taskset.py``:
``read_file`` reads one of the files the task names, ``replace_text`` changes one exact piece
of a file the task lets the model edit, and ``run_tests`` runs the repository's tests as a
fixed command. Which files each tool may touch is the task's, so the schemas the model reads
are this toolset's own (each path an ``enum`` of the task's files), and the descriptions say
so in words. The tests are never editable: an edit of a test is refused with a reason the
model reads, so a task whose tests contradict each other cannot be resolved by the tools.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from .atomic import write_atomically
from .contracts import Confinement
from .pytest_run import run_pytest
from .taskset import Task
from .tools import (
    MAX_FILE_BYTES,
    MAX_LINES,
    MAX_TEST_OUTPUT,
    TEST_TIMEOUT,
    file_view,
    read_regular,
)
from .toolset import Toolset, shown, tool

_PATH = {"type": "string", "description": "The file, relative to the repository's root."}


class TaskTools(Toolset):
    """The model's tools for ``task``, working inside ``root`` (a copy of its repository)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        task: Task,
        *,
        test_timeout: float = TEST_TIMEOUT,
        sandbox: Confinement | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.task = task
        self.test_timeout = test_timeout
        if sandbox is not None:
            sandbox.check()
        self.sandbox = sandbox
        self.schemas = _schemas(task)  # this task's files, named in each schema

    @tool(
        description="Read one file of the repository and return its text. The files you may "
        "read: {read}. Read a file before you edit it. To read only part of it, give "
        "'offset' (the first line, from 1) and 'limit' (how many lines).",
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "offset": {"type": "integer", "minimum": 1, "description": "The first line."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LINES,
                    "description": f"How many lines, at most {MAX_LINES}.",
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
        data, info = self._read(path, self.task.read, "read")
        return file_view(path, data, info.st_size, offset, limit)

    @tool(
        description="Edit a file by replacing one exact piece of its text. The files you may "
        "edit: {edit}; the tests ({tests}) may never be edited. 'old' must appear exactly "
        "once in the file, copied character for character from your last read_file; if it "
        "is not found, read the file again.",
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "old": {"type": "string", "description": "The exact text to replace."},
                "new": {"type": "string", "description": "The text to put in its place."},
            },
            "required": ["path", "old", "new"],
            "additionalProperties": False,
        },
    )
    def replace_text(self, path: str, old: str, new: str) -> dict[str, Any]:
        if path in self.task.tests:
            raise ValueError(
                f"{path} is one of the tests, and the tests may never be edited: change "
                f"{' or '.join(self.task.edit)} so that they pass, or say why they cannot"
            )
        if not old:
            raise ValueError("'old' is empty; copy the exact lines to replace from read_file")
        if len(new) > MAX_FILE_BYTES:
            raise ValueError(f"'new' is {len(new)} characters; at most {MAX_FILE_BYTES}")
        data, info = self._read(path, self.task.edit, "edit")
        if info.st_size > MAX_FILE_BYTES:
            raise ValueError(f"{path} is {info.st_size} bytes, more than an edit may work on")
        text = data.decode("utf-8", errors="replace")
        found = text.count(old)
        if found != 1:
            where = "does not occur" if found == 0 else f"occurs {found} times"
            raise ValueError(
                f"'old' {where} in {path}; it must occur exactly once. Read the file again "
                "and copy the exact text, with more surrounding lines if needed."
            )
        write_atomically(
            self.root / path, text.replace(old, new, 1).encode("utf-8"), mode=info.st_mode & 0o777
        )
        return {"path": path, "replaced": 1}

    @tool(
        description="Run the repository's tests with pytest and return its exit_code (0 means "
        "every test passed) and the end of its output. Takes no arguments.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    )
    def run_tests(self) -> dict[str, Any]:
        run = run_pytest(
            self.root, timeout=self.test_timeout, tail_bytes=MAX_TEST_OUTPUT, sandbox=self.sandbox
        )
        return {"exit_code": run.exit_code, "timed_out": run.timed_out, "output": run.output}

    def _read(self, path: str, allowed: tuple[str, ...], what: str):
        if path not in allowed:
            raise ValueError(
                f"path {shown(path)} is not a file you may {what}; use one of: {', '.join(allowed)}"
            )
        return read_regular(self.root, path)


def _schemas(task: Task) -> list[dict[str, Any]]:
    """The tools as ``task``'s model reads them: its files named, each path an enum."""
    words = {
        "read": ", ".join(task.read),
        "edit": ", ".join(task.edit),
        "tests": ", ".join(task.tests) or "tests/",
    }
    paths = {"read_file": task.read, "replace_text": task.edit}
    schemas = []
    for record in TaskTools.tools:
        schema = copy.deepcopy(record.schema)
        function = schema["function"]
        function["description"] = record.description.format(**words)
        if record.name in paths:
            function["parameters"]["properties"]["path"]["enum"] = list(paths[record.name])
        schemas.append(schema)
    return schemas
