"""The symbols tools of lesson 13: the toolkit, plus what a language server knows about names.

``SymbolTools`` is lesson 09's ``Toolkit`` with four more records, as an editor built on
the Language Server Protocol gives its agent (Cursor does): ``definition`` (where a name
is defined), ``references`` (every place it is used, by meaning, not by spelling: a
method is told apart from a function of the same name, a word in a comment is not a
use), ``hover`` (its signature, or its type, and its docstring) and ``diagnostics`` (the
errors a type checker finds in one file). The server is ty (Astral's type checker, one
binary from PyPI), found as ripgrep is found (``find_language_server``), started on the
first symbols call and ended with the toolset (``close``, or ``with``).

A model cannot count columns, so a name is given as the model sees it: the ``symbol``,
and the ``path`` and ``line`` where it is written (as ``grep`` and ``read_file`` show
them); the tool finds the column. With the name alone, ``definition`` and ``references``
ask the server's index of the workspace (``workspace/symbol``) for the definitions of
exactly that name. Results are compact (``symbol_places.py``): workspace paths, 1-based
lines and the line's text, sorted, at most ``CAP`` and then "and N more"; places outside
the workspace are counted, never shown.

Before each question the server is told what changed on disk since the last one
(``workspace/didChangeWatchedFiles``): a file written by ``edit`` or by a command is
seen by the next question. Nothing waits for ever: a server that is missing, crashes or
does not answer within ``timeout`` ends the call in a tool error the model reads
(``SymbolsError``, an ``OSError``); after a crash the next call starts a fresh server, at
most ``MAX_RESTARTS`` times.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

from .lsp_client import (
    REQUEST_TIMEOUT,
    START_TIMEOUT,
    LspClosed,
    LspConnection,
    LspError,
    LspTimeout,
)
from .symbol_places import CAP, column_of, context, places, workspace_path
from .toolkit import Toolkit
from .toolset import shown, tool

MAX_RESTARTS = 2  # fresh servers started after a crash, per toolset
MAX_HOVER = 800  # characters of a hover shown
DECORATOR_LINES = 20  # lines after a definition's start searched for its name
SOURCES = (".py", ".pyi")  # the files the server is told about when they change
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
INSTALL = "pip install ty==1.0.0 (the course's requirements include it)"


class SymbolsError(OSError):
    """A symbols call that could not be answered: no server, a crash, no answer in time."""


def find_language_server() -> list[str] | None:
    """The command that starts ty's language server: ``ty`` beside this Python (where pip
    puts it), else where the ``ty`` distribution says it put it, else on ``PATH``."""
    name = "ty.exe" if os.name == "nt" else "ty"
    beside = Path(sysconfig.get_path("scripts")) / name
    if beside.is_file():
        return [str(beside), "server"]
    try:
        recorded = metadata.distribution("ty").files or []
    except metadata.PackageNotFoundError:
        recorded = []
    for file in recorded:
        if file.name == name and Path(file.locate()).is_file():
            return [str(Path(file.locate()).resolve()), "server"]
    found = shutil.which(name)
    return [found, "server"] if found else None


_NAME = {"type": "string", "description": "The name, as written in the code, e.g. 'parse_date'."}
_WHERE = {
    "path": {
        "type": "string",
        "description": "The file where the name is written (as grep and read_file show it).",
    },
    "line": {"type": "integer", "minimum": 1, "description": "The line it is written on."},
}


def _schema(*, where_required: bool) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"symbol": _NAME, **_WHERE},
        "required": ["symbol", "path", "line"] if where_required else ["symbol"],
        "additionalProperties": False,
    }


class SymbolTools(Toolkit):
    """The toolkit and the symbols tools, in the workspace ``root``; ``server`` is the
    command that starts a language server over stdio (default: ty's)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        server: list[str] | None = None,
        timeout: float = REQUEST_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
        **toolkit: Any,
    ) -> None:
        super().__init__(root, **toolkit)
        self.server = server if server is not None else find_language_server()
        self.timeout, self.start_timeout = timeout, start_timeout
        self.connection: LspConnection | None = None
        self.restarts = -1  # the first start is not a restart
        self._known: dict[str, tuple[int, int]] = {}  # what the server last saw on disk
        self._opened: dict[str, int] = {}  # path -> version, for the files opened for diagnostics

    @tool(
        description=(
            "Where a name (a function, class, method, variable) is defined, from the language "
            "server. Give the symbol and, if you know it, the path and line where it is "
            "written (as grep or read_file show it): the server follows that exact use, "
            "through imports and methods. With the symbol alone you get every definition of "
            "exactly that name."
        ),
        parameters=_schema(where_required=False),
        read_only=True,
    )
    def definition(
        self, symbol: str, path: str | None = None, line: int | None = None
    ) -> dict[str, Any]:
        if path is None and line is None:
            found = self._defined_as(symbol)
            return self._shown(symbol, "definitions", places(found, self._root_path))
        uri, position = self._position(symbol, path, line)
        answer = self._ask(
            "textDocument/definition", {"textDocument": {"uri": uri}, "position": position}
        )
        return self._shown(symbol, "definitions", places(answer or [], self._root_path))

    @tool(
        description=(
            "Every place a name is used, the definition included, from the language server: "
            "uses by meaning, not by spelling (a method is told apart from a function of the "
            "same name; words in strings and comments are not uses). Give the symbol and the "
            "path and line where it is written, or the symbol alone when only one thing in "
            f"the workspace has that name. At most {CAP} places, then how many more."
        ),
        parameters=_schema(where_required=False),
        read_only=True,
    )
    def references(
        self, symbol: str, path: str | None = None, line: int | None = None
    ) -> dict[str, Any]:
        if path is None and line is None:
            path, line = self._only_definition(symbol)
        uri, position = self._position(symbol, path, line)
        answer = self._ask(
            "textDocument/references",
            {
                "textDocument": {"uri": uri},
                "position": position,
                "context": {"includeDeclaration": True},
            },
        )
        return self._shown(symbol, "references", places(answer or [], self._root_path))

    @tool(
        description=(
            "The signature or type of a name and its docstring, from the language server. "
            "Give the symbol and the path and line where it is written."
        ),
        parameters=_schema(where_required=True),
        read_only=True,
    )
    def hover(self, symbol: str, path: str, line: int) -> dict[str, Any]:
        uri, position = self._position(symbol, path, line)
        answer = self._ask(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": position}
        )
        contents = answer.get("contents") if isinstance(answer, dict) else None
        text = contents.get("value") if isinstance(contents, dict) else contents
        if not isinstance(text, str) or not text.strip():
            return {"symbol": symbol, "path": path, "line": line, "hover": None}
        if len(text) > MAX_HOVER:
            text = text[:MAX_HOVER] + " [...]"
        return {"symbol": symbol, "path": path, "line": line, "hover": text.strip()}

    @tool(
        description=(
            "The errors and warnings the type checker finds in one file (an undefined name, "
            "a wrong argument type, a missing attribute), each with its line. Run it after "
            f"an edit. At most {CAP}, then how many more."
        ),
        parameters={
            "type": "object",
            "properties": {"path": _WHERE["path"]},
            "required": ["path"],
            "additionalProperties": False,
        },
        read_only=True,
    )
    def diagnostics(self, path: str) -> dict[str, Any]:
        where, lines = self._lines(path)
        uri = (self.root / where).as_uri()
        connection = self._connection()
        if str(where) not in self._opened:
            self._opened[str(where)] = 1
            text = "\n".join(lines) + "\n"
            connection.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
        answer = self._ask("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        items = answer.get("items") if isinstance(answer, dict) else None
        found = []
        for item in items if isinstance(items, list) else []:
            start = item.get("range", {}).get("start", {})
            number = start.get("line", 0) + 1
            found.append(
                {
                    "line": number,
                    "severity": SEVERITIES.get(item.get("severity"), "error"),
                    "message": str(item.get("message"))[:300],
                    "text": context(lines[number - 1]) if 0 < number <= len(lines) else "",
                }
            )
        found.sort(key=lambda item: item["line"])
        result: dict[str, Any] = {
            "path": str(where),
            "count": len(found),
            "diagnostics": found[:CAP],
        }
        if len(found) > CAP:
            result["more"] = f"and {len(found) - CAP} more"
        return result

    # --- the server -----------------------------------------------------------------------

    def close(self) -> None:
        """End the language server, if one was started (and everything it started)."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def __enter__(self) -> SymbolTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _root_path(self) -> PurePosixPath:
        return PurePosixPath(self.root.as_posix())

    def _connection(self) -> LspConnection:
        """The running server, started (again) if needed, told what changed on disk."""
        if self.connection is not None and not self.connection.alive:
            self.close()
        if self.connection is None:
            if not self.server or shutil.which(self.server[0]) is None:
                raise SymbolsError(
                    "the symbols tools need the ty language server, which is not installed "
                    f"here: {INSTALL}. Meanwhile grep finds text and read_file reads files."
                )
            if self.restarts >= MAX_RESTARTS:
                raise SymbolsError(
                    f"the language server failed {self.restarts + 1} times; the symbols tools "
                    "are off for this run: use grep and read_file"
                )
            self.restarts += 1
            self._known, self._opened = self._on_disk(), {}
            try:
                self.connection = LspConnection(
                    self.server,
                    root=self.root,
                    timeout=self.timeout,
                    start_timeout=self.start_timeout,
                )
            except LspError as exc:
                raise SymbolsError(f"the language server could not start: {exc}") from None
            return self.connection
        self._tell_changes(self.connection)
        return self.connection

    def _ask(self, method: str, params: dict) -> Any:
        connection = self._connection()
        try:
            return connection.request(method, params)
        except LspTimeout as exc:
            raise SymbolsError(f"{exc}; try again, or use grep") from None
        except LspClosed as exc:
            self.close()
            raise SymbolsError(f"{exc}; the next symbols call starts it again") from None
        except LspError as exc:
            raise SymbolsError(f"the language server refused: {exc}") from None

    def _on_disk(self) -> dict[str, tuple[int, int]]:
        """Each source file's size and modification time, as the workspace's walk sees them."""
        known = {}
        for entry in self.workspace.walk():
            if entry.path.endswith(SOURCES):
                try:
                    info = os.stat(self.root / entry.path, follow_symlinks=False)
                except OSError:
                    continue
                known[entry.path] = (info.st_size, info.st_mtime_ns)
        return known

    def _tell_changes(self, connection: LspConnection) -> None:
        """``didChangeWatchedFiles`` for the files created (1), changed (2) or deleted (3)
        since the server last saw them; an opened file's new text as ``didChange``."""
        now, before = self._on_disk(), self._known
        changes = [
            (path, 1 if path not in before else 2) for path in now if now[path] != before.get(path)
        ]
        changes += [(path, 3) for path in before if path not in now]
        if not changes:
            return
        self._known = now
        connection.notify(
            "workspace/didChangeWatchedFiles",
            {
                "changes": [
                    {"uri": (self.root / path).as_uri(), "type": kind} for path, kind in changes
                ]
            },
        )
        for path, kind in changes:
            if path in self._opened and kind == 2:
                self._opened[path] += 1
                text = (self.root / path).read_text(encoding="utf-8", errors="replace")
                connection.notify(
                    "textDocument/didChange",
                    {
                        "textDocument": {
                            "uri": (self.root / path).as_uri(),
                            "version": self._opened[path],
                        },
                        "contentChanges": [{"text": text}],
                    },
                )

    # --- names and places -----------------------------------------------------------------

    def _lines(self, path: str):
        where = self.workspace.relative(path)
        data, _ = self.workspace.read(where, 2_000_000)
        return where, data.decode("utf-8", errors="replace").splitlines()

    def _position(self, symbol: str, path: str | None, line: int | None) -> tuple[str, dict]:
        """The URI and LSP position of ``symbol`` as written on ``line`` of ``path``."""
        if path is None or line is None:
            raise ValueError(
                "give both 'path' and 'line' (where the symbol is written), or neither"
            )
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise TypeError(f"line is a line number from 1, not {shown(line)}")
        where, lines = self._lines(path)
        if line > len(lines):
            raise ValueError(f"{where} has {len(lines)} lines, not {line}")
        column = column_of(lines[line - 1], symbol)
        if column is None:
            raise ValueError(
                f"{shown(symbol)} is not written on line {line} of {where}, which reads "
                f"{context(lines[line - 1])!r}: give the line where the name is written"
            )
        return (self.root / where).as_uri(), {"line": line - 1, "character": column}

    def _defined_as(self, symbol: str) -> list[dict]:
        """The locations of the definitions named exactly ``symbol``, from the server's index."""
        word = symbol.rsplit(".", 1)[-1]
        if not word.isidentifier():
            raise ValueError(f"{shown(symbol)} is not a name; give one such as 'parse_date'")
        answer = self._ask("workspace/symbol", {"query": word})
        found = [
            item["location"]
            for item in answer or []
            if isinstance(item, dict)
            and item.get("name") == word
            and isinstance(item.get("location"), dict)
        ]
        if not found:
            raise ValueError(f"nothing named {shown(word)} is defined in the workspace")
        return [self._at_name(location, word) for location in found]

    def _at_name(self, location: dict, word: str) -> dict:
        """``location`` moved to the line where ``word`` is written: a definition's range
        starts at its first decorator (``@dataclass``), a line that does not name it."""
        start = (location.get("range") or {}).get("start") or {}
        path = workspace_path(location.get("uri"), self._root_path)
        line = start.get("line")
        if path is None or not isinstance(line, int):
            return location
        try:
            lines = self._lines(path)[1]
        except (OSError, ValueError):
            return location
        for number in range(line, min(line + DECORATOR_LINES, len(lines))):
            column = column_of(lines[number], word)
            if column is not None:
                position = {"line": number, "character": column}
                return {**location, "range": {"start": position, "end": position}}
        return location

    def _only_definition(self, symbol: str) -> tuple[str, int]:
        """The path and line of the one definition named ``symbol``, or a ValueError."""
        found = places(self._defined_as(symbol), self._root_path)["places"]
        if len(found) != 1:
            listed = ", ".join(f"{place['path']}:{place['line']}" for place in found)
            raise ValueError(
                f"{len(found)} definitions are named {shown(symbol)} ({listed}): "
                "give the path and line of the one you mean"
            )
        return found[0]["path"], found[0]["line"]

    def _shown(self, symbol: str, key: str, found: dict[str, Any]) -> dict[str, Any]:
        """``places``' answer with each place's line of text, under ``key``."""
        texts: dict[str, list[str]] = {}
        for place in found["places"]:
            if place["path"] not in texts:
                try:
                    texts[place["path"]] = self._lines(place["path"])[1]
                except (OSError, ValueError):
                    texts[place["path"]] = []
            lines = texts[place["path"]]
            place["text"] = context(lines[place["line"] - 1]) if place["line"] <= len(lines) else ""
        result = {"symbol": symbol, "count": found["count"], key: found["places"]}
        result.update({name: found[name] for name in ("more", "outside") if name in found})
        return result


__all__ = ["SymbolTools", "SymbolsError", "find_language_server", "workspace_path"]
