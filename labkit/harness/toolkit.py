"""The standard toolkit of lesson 09: read, write and edit files, find them, search them, and
a shell for the rest, in a workspace whose tests are read-only.

``ReadTools`` holds the three tools that change nothing (``read_file``, ``glob``,
``grep``: ``read_only=True``, so a loop may run several of them at once); ``Toolkit``
adds ``write_file``, ``edit`` and ``run_command``. Each is a record (``toolset.py``'s
``@tool``) whose description is written to the model: what the tool does, which tool to
prefer, and what is refused and why. Those sentences are part of every request.

What the file tools guarantee (``workspace.py`` does the reaching, ``edits.py`` the edit):

- no path outside the workspace, no link followed, no folder written as a file;
- ``write_file`` and ``edit`` refuse read-only paths (the sample's tests), write whole
  or not at all, and refuse a file the model has not read, or that changed since it read
  it (a *stale* edit): the model's copy of the text is what the edit was written from, so a
  file changed since (by a person, a formatter, another tool) is read again first;
- ``edit`` changes nothing unless ``old_string`` occurs exactly once (or ``replace_all``),
  and keeps the file's line endings and encoding.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from .budget import head_and_tail
from .contracts import Confinement
from .edits import apply_edit, decode, encode, newline_of, occurrences, with_newline
from .sample import TEST_FILE
from .search import GREP_TIMEOUT, find_ripgrep, glob_files, grep_files
from .search_replace import MAX_EDIT_BYTES
from .shell import ShellTools
from .tools import MAX_LINES, numbered_lines
from .toolset import Toolset, shown, tool
from .workspace import Entry, Workspace

MAX_READ_BYTES = MAX_EDIT_BYTES  # the most read_file returns of one file
MAX_LISTED = 100  # paths glob and grep's file list return, then "and N more"
MAX_OUTPUT = 4_000  # characters of grep's lines, cut head and tail past that
READ_ONLY = (TEST_FILE.split("/")[0],)  # the sample's tests folder

#: The usage-policy sentences lesson 09 measures on a real model (with and without them).
READ_NUDGE = "Prefer read_file to run_command with cat, head or tail."
RUN_NUDGE = (
    "Do not use it to read, list or search files (cat, head, ls, find, grep): read_file, "
    "glob and grep do that."
)
NUDGES = (READ_NUDGE, RUN_NUDGE)

_PATH = {
    "type": "string",
    "description": "The file's path, relative to the workspace, e.g. 'path_rules.py'.",
}


class ReadTools(Toolset):
    """The toolkit's read-only tools, in the workspace ``root``."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        read_only: tuple[str, ...] = READ_ONLY,
        ripgrep: str | None = None,
        grep_timeout: float = GREP_TIMEOUT,
        sandbox: Confinement | None = None,
    ) -> None:
        """``sandbox``: where ``Toolkit``'s ``run_command`` runs its programs (lesson 12),
        checked here once, as ``RepoTools`` checks it; the file tools and ``grep`` are the
        harness's own code and reach files only through the workspace."""
        if sandbox is not None:
            sandbox.check()
        self.sandbox = sandbox
        self.workspace = Workspace(root, read_only=read_only)
        self.root = self.workspace.root
        self.ripgrep = find_ripgrep() if ripgrep is None else ripgrep or None
        self.grep_timeout = grep_timeout
        self.seen: dict[str, str] = {}  # path -> sha256 of the bytes the model last saw

    @tool(
        description=(
            "Read a text file of the workspace. Without 'offset' and 'limit' you get the "
            "whole file; with them, those lines, each with its number, and the file's total "
            f"number of lines ('limit' at most {MAX_LINES}): read a long file a part at a time. "
            "Read a file before you edit or overwrite it: edit and write_file refuse a file "
            f"you have not read, or that changed since you read it. {READ_NUDGE}"
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The first line to read, from 1.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LINES,
                    "description": "How many lines to read.",
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
        where = self.workspace.relative(path)
        data, _ = self.workspace.read(where, MAX_READ_BYTES)
        if b"\0" in data:
            raise ValueError(f"{where} is a binary file; read_file reads text")
        self.seen[str(where)] = _digest(data)
        text, _ = decode(data[:MAX_READ_BYTES])
        if len(data) > MAX_READ_BYTES:
            text += f"\n[labkit: file cut at {MAX_READ_BYTES} bytes; read it with offset/limit]"
        if offset is None and limit is None:
            return {"path": str(where), "content": text}
        return numbered_lines(
            str(where),
            text,
            offset=1 if offset is None else offset,
            limit=MAX_LINES if limit is None else limit,
        )

    @tool(
        description=(
            "Find files by name: the paths, relative to the workspace and sorted, that match "
            "a glob pattern such as '**/*.py' (every Python file) or 'tests/test_*.py'. '*' "
            "stays within one folder, '**' crosses any number of folders. Hidden files "
            f"(names starting with '.') are not listed. At most {MAX_LISTED} paths, then how "
            "many more: narrow the pattern. Use it instead of run_command ls or find."
        ),
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob pattern, e.g. '**/*.py'."}
            },
            "required": ["pattern"],
            "additionalProperties": False,
        },
        read_only=True,
    )
    def glob(self, pattern: str) -> dict[str, Any]:
        files = glob_files(self.workspace.walk(), pattern)
        return {"pattern": pattern, **_listed(files)}

    @tool(
        description=(
            "Search the contents of files for a regular expression (Rust's syntax: like "
            "Python's re, without look-around or back-references). By default you get the "
            "paths of the files that match; output 'lines' gives each matching line as "
            "path:line:text. Narrow it with 'path' (a folder or a file) and 'glob' (a "
            "pattern the file's path must match, e.g. '**/*.py'). Hidden files are not "
            "searched; binary files and files over 1 MB are skipped and counted. Use it "
            "instead of run_command grep."
        ),
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {
                    "type": "string",
                    "description": "A folder or file to search in (default: everything).",
                },
                "glob": {"type": "string", "description": "Only files whose path matches it."},
                "output": {
                    "type": "string",
                    "enum": ["files", "lines"],
                    "description": "'files' (default): the matching files; 'lines': the lines.",
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        },
        read_only=True,
    )
    def grep(
        self, pattern: str, path: str | None = None, glob: str | None = None, output: str = "files"
    ) -> dict[str, Any]:
        if output not in ("files", "lines"):
            raise ValueError(f"output is 'files' or 'lines', not {shown(output)}")
        if not pattern:
            raise ValueError("pattern is empty; give the text or regular expression to find")
        scope = self._scope(path)
        sizes: Iterable[Entry] = ()
        if isinstance(scope, Entry):
            target: str | list[Entry] = [scope]
        elif glob is not None:  # the files a glob keeps, named to ripgrep one by one
            entries = list(self.workspace.walk(scope))
            keep = set(glob_files(entries, glob))
            target = [entry for entry in entries if entry.path in keep]
        else:  # ripgrep walks the folder; the walk here only counts what is too large
            target, sizes = str(scope or "."), self.workspace.walk(scope)
        found = grep_files(
            self.root,
            target,
            pattern,
            lines=output == "lines",
            ripgrep=self.ripgrep,
            timeout=self.grep_timeout,
            sizes=sizes,
        )
        result: dict[str, Any] = {"pattern": pattern}
        if output == "files":
            result.update(_listed(found.files))
        else:
            text = "".join(f"{name}:{number}:{line}\n" for name, number, line in found.lines)
            result.update({"count": len(found.lines), "lines": head_and_tail(text, MAX_OUTPUT)})
        skipped = [
            f"{found.binary} binary file(s) that matched" if found.binary else "",
            f"{found.too_large} file(s) over 1 MB" if found.too_large else "",
        ]
        if any(skipped):
            result["skipped"] = " and ".join(part for part in skipped if part)
        return result

    def _scope(self, path: str | None) -> PurePosixPath | Entry | None:
        """What ``path`` names to grep: nothing (the root), a folder, or one file."""
        if path is None or path in (".", "./", ""):
            return None
        where = self.workspace.relative(path)
        entry = self.workspace.entry(where)
        return entry if entry is not None else self.workspace.folder(where)


class Toolkit(ReadTools):
    """The standard toolkit: ``ReadTools`` and ``write_file``, ``edit``, ``run_command``."""

    @tool(
        description=(
            "Create a file, or replace a whole file, with 'content'. To change part of a "
            "file, use edit: it sends only the change. An existing file must be read first "
            "with read_file. Folders are made as needed. Refused: paths outside the "
            "workspace, links, folders, and read-only files (the tests: fix the code, never "
            "the tests). A person may be asked to approve each write."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "content": {"type": "string", "description": "The file's whole new text."},
            },
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    )
    def write_file(self, path: str, content: str) -> dict[str, Any]:
        where = self._writable(path)
        data = content.encode("utf-8")
        if len(data) > MAX_EDIT_BYTES:
            raise ValueError(
                f"content is {len(data)} bytes; a file may be at most {MAX_EDIT_BYTES}"
            )
        mode, existed = 0o644, self.workspace.exists(where)
        if existed:
            _, info = self._unchanged_since_read(where)
            mode = info.st_mode & 0o777
        self.workspace.write(where, data, mode=mode)
        self.seen[str(where)] = _digest(data)
        return {"path": str(where), "written": len(data), "created": not existed}

    @tool(
        description=(
            "Replace one exact piece of a file's text. Copy 'old_string' exactly from your "
            "last read_file of that file (without the line numbers read_file adds); it must "
            "occur exactly once: include a few surrounding lines to make it unique, or set "
            "'replace_all' to true to change every occurrence. If it is not found or not "
            "unique, or the file changed since you read it, nothing is changed and the error "
            "says why: read the file again. The file keeps its line endings and encoding. "
            "Read-only files (the tests) are refused. A person may be asked to approve each "
            "edit."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put instead."},
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every occurrence (default false: exactly one).",
                },
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": False,
        },
    )
    def edit(
        self, path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> dict[str, Any]:
        if not isinstance(replace_all, bool):
            raise TypeError(f"replace_all is true or false, not {shown(replace_all)}")
        where = self._writable(path)
        if not self.workspace.exists(where):
            raise FileNotFoundError(f"{where} does not exist; to create it, use write_file")
        data, info = self._unchanged_since_read(where)
        text, encoding = decode(data)
        changed = apply_edit(text, old_string, new_string, replace_all, what=str(where))
        new = encode(changed, encoding, what=str(where))
        self.workspace.write(where, new, mode=info.st_mode & 0o777)
        self.seen[str(where)] = _digest(new)
        count = len(occurrences(text, with_newline(old_string, newline_of(text))))
        return {"path": str(where), "replaced": count if replace_all else 1}

    run_command = dataclasses.replace(
        ShellTools.run_command,
        description=ShellTools.run_command.description.replace(
            "Long output is cut", f"{RUN_NUDGE} Long output is cut"
        ),
    )

    def _writable(self, path: str):
        where = self.workspace.relative(path)
        if self.workspace.is_read_only(where):
            raise PermissionError(
                f"{where} is read-only in this task: the tests are the judge, so fix the "
                "code, never the tests"
            )
        return where

    def _unchanged_since_read(self, where) -> tuple[bytes, os.stat_result]:
        """The file's bytes and stat, if the model read it and it has not changed since."""
        data, info = self.workspace.read(where, MAX_EDIT_BYTES)
        if len(data) > MAX_EDIT_BYTES:
            raise ValueError(f"{where} is over {MAX_EDIT_BYTES} bytes, more than edits may change")
        seen = self.seen.get(str(where))
        if seen is None:
            raise ValueError(
                f"{where} has not been read yet: read it with read_file first, then edit "
                "it (nothing was changed)"
            )
        if seen != _digest(data):
            raise ValueError(
                f"{where} changed since you last read it (another program wrote it): read "
                "it again with read_file and make your edit from what is there now "
                "(nothing was changed)"
            )
        return data, info


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _listed(paths: list[str]) -> dict[str, Any]:
    """At most ``MAX_LISTED`` paths, and how many more there are."""
    result: dict[str, Any] = {"count": len(paths), "files": paths[:MAX_LISTED]}
    if len(paths) > MAX_LISTED:
        result["more"] = f"and {len(paths) - MAX_LISTED} more; narrow the pattern"
    return result
