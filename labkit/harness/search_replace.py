"""Edits written as text: Aider's SEARCH/REPLACE blocks, read and applied by the host.

Instead of calling an ``edit`` tool, a model may answer in plain text::

    path_rules.py
    ```python
    <<<<<<< SEARCH
            path = PurePosixPath(name)
    =======
            path = PurePosixPath(name.replace("\\\\", "/"))
    >>>>>>> REPLACE
    ```

``parse_search_replace(text)`` reads such an answer into a list of ``Block``s, or raises
a named error for each malformed shape (exercise 9b writes it). Its rules:

1. Lines are split on ``\\n``; a ``\\r`` ending a line is part of a CRLF line ending.
2. The markers are whole lines: ``<<<<<<< SEARCH``, ``=======``, ``>>>>>>> REPLACE``
   (seven characters, then the word; spaces after them are ignored).
3. A block's file is the last line above its ``SEARCH`` marker, after the previous block,
   that is neither blank nor a code fence (a line starting with three backticks); if there is
   none, the previous block's file; if there is no previous block: ``MissingPath``.
4. The SEARCH part runs to the first ``=======`` line. Text ending first, or another
   ``SEARCH`` or ``REPLACE`` marker, is ``MissingDivider``.
5. The REPLACE part runs to the ``>>>>>>> REPLACE`` line. A ``=======`` line in it is
   text (a heading underline, say). Text ending first, or a ``SEARCH`` marker, is
   ``UnclosedBlock``.
6. A ``>>>>>>> REPLACE`` line outside any block is ``StrayMarker``. Any other line
   between blocks (prose, a fence) matters only as a possible path (rule 3).
7. Each part is its lines, each followed by ``\\n``: the last line of the text needs no
   newline of its own.

Reading is one pass over the lines: linear in the text. Applying the blocks
(``apply_search_replace``) uses the ``edit`` tool's rule (``edits.apply_edit``), block
after block, in memory first: an unknown or read-only file, or a SEARCH part that is
absent (with the closest lines found by ``difflib`` as a hint: never a fuzzy apply) or
not unique stops it before any file is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .edits import NotFound, NotUnique, apply_edit, decode, encode, lines_named, near_miss
from .workspace import Workspace

SEARCH, DIVIDER, REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
FENCE = "```"
#: The largest file a block may change (the edit tool's limit too).
MAX_EDIT_BYTES = 256_000


class SearchReplaceError(ValueError):
    """A malformed answer, or a block that cannot be applied; ``line`` is where (from 1)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class MissingPath(SearchReplaceError):
    pass


class MissingDivider(SearchReplaceError):
    pass


class UnclosedBlock(SearchReplaceError):
    pass


class StrayMarker(SearchReplaceError):
    pass


class NoBlocks(SearchReplaceError):
    pass


class UnknownFile(SearchReplaceError):
    pass


class ReadOnlyFile(SearchReplaceError):
    pass


@dataclass(frozen=True)
class Block:
    """One edit: replace ``search`` by ``replace`` in ``path``. ``line`` is the SEARCH
    marker's line (from 1); ``path_line`` the line the path came from (0: the previous
    block's); ``divider`` and ``end`` the lines of its other two markers."""

    path: str
    search: str
    replace: str
    line: int
    divider: int
    end: int
    path_line: int

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "search": self.search, "replace": self.replace}


def lines_of(text: str) -> list[str]:
    """The text's lines without their line endings (LF or CRLF)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_blocks(text: str) -> Iterator[Block]:
    """The blocks of ``text``, in order, as they are read; a named error where one is
    malformed (the blocks before it have been yielded)."""
    lines = lines_of(text)
    count = len(lines)
    path, path_line, previous = None, 0, None
    index = 0
    while index < count:
        line = lines[index].rstrip()
        if line == REPLACE:
            raise StrayMarker(
                f"line {index + 1}: '{REPLACE}' with no '{SEARCH}' before it; every block "
                f"starts with a {SEARCH} line",
                index + 1,
            )
        if line != SEARCH:
            if line and not line.startswith(FENCE):
                path, path_line = lines[index].strip(), index + 1
            index += 1
            continue
        start = index
        if path is None:
            if previous is None:
                raise MissingPath(
                    f"line {start + 1}: the block has no file path; write the file's path "
                    f"on the line above '{SEARCH}'",
                    start + 1,
                )
            path, path_line = previous, 0
        divider = _next_marker(lines, start + 1, DIVIDER, (SEARCH, REPLACE))
        if divider is None or lines[divider].rstrip() != DIVIDER:
            where = "the text ends" if divider is None else f"line {divider + 1}"
            raise MissingDivider(
                f"line {start + 1}: the block has no '{DIVIDER}' line before {where}; "
                f"write {DIVIDER} between the SEARCH text and the REPLACE text",
                start + 1,
            )
        end = _next_marker(lines, divider + 1, REPLACE, (SEARCH,))
        if end is None or lines[end].rstrip() != REPLACE:
            where = "the text ends" if end is None else f"a new block starts at line {end + 1}"
            raise UnclosedBlock(
                f"line {start + 1}: the block is not closed: {where} before its '{REPLACE}' line",
                start + 1,
            )
        yield Block(
            path,
            _part(lines, start + 1, divider),
            _part(lines, divider + 1, end),
            start + 1,
            divider + 1,
            end + 1,
            path_line,
        )
        previous, path, path_line = path, None, 0
        index = end + 1


def parse_search_replace(text: str) -> list[Block]:
    """Every block of ``text`` (an empty list if it has none), or the first named error."""
    return list(read_blocks(text))


def _next_marker(lines: list[str], start: int, wanted: str, stops: tuple[str, ...]) -> int | None:
    """The index of the first line from ``start`` that is ``wanted`` or one of ``stops``."""
    for index in range(start, len(lines)):
        line = lines[index].rstrip()
        if line == wanted or line in stops:
            return index
    return None


def _part(lines: list[str], start: int, end: int) -> str:
    return "".join(line + "\n" for line in lines[start:end])


# --- Applying the blocks ---------------------------------------------------------------------


def apply_search_replace(workspace: Workspace, text: str) -> list[dict[str, object]]:
    """Parse ``text`` and apply its blocks to the files of ``workspace``: all of them, or,
    at the first block that cannot be applied, none (a named error says which and why).

    Returns one row per file changed: its path and how many blocks changed it.
    """
    blocks = parse_search_replace(text)
    if not blocks:
        raise NoBlocks(
            f"no SEARCH/REPLACE block was found; each block is the file's path, then "
            f"{SEARCH}, the lines to find, {DIVIDER}, the lines to put instead, {REPLACE}",
            0,
        )
    files: dict[str, list] = {}  # path -> [text, encoding, mode, blocks applied]
    for number, block in enumerate(blocks, start=1):
        named = f"block {number} (line {block.line}), for {block.path!r}"
        try:
            path = workspace.relative(block.path)
        except (TypeError, ValueError) as exc:
            raise UnknownFile(f"{named}: {exc}", block.line) from None
        if workspace.is_read_only(path):
            raise ReadOnlyFile(
                f"{named}: {path} is read-only in this task; change the code, not the tests",
                block.line,
            )
        key = str(path)
        if key not in files:
            try:
                data, info = workspace.read(path, limit=MAX_EDIT_BYTES)
            except OSError as exc:
                raise UnknownFile(f"{named}: {exc}", block.line) from None
            content, encoding = decode(data[:MAX_EDIT_BYTES])
            files[key] = [content, encoding, info.st_mode & 0o777, 0]
        entry = files[key]
        try:
            entry[0] = apply_edit(entry[0], block.search, block.replace, what=key)
        except NotFound as exc:
            raise type(exc)(
                f"{named}: the SEARCH text is not in {key}. {near_miss(exc.closest)}",
                exc.closest,
            ) from None
        except NotUnique as exc:
            raise type(exc)(
                f"{named}: the SEARCH text occurs {exc.count} times in {key} "
                f"({lines_named(exc.lines)}); add lines around it so that it occurs once",
                exc.count,
                exc.lines,
                exc.overlapping,
            ) from None
        except ValueError as exc:  # EmptyOld
            raise type(exc)(f"{named}: the SEARCH part is empty; {exc}") from None
        entry[3] += 1
    for key, (content, encoding, mode, _) in files.items():
        workspace.write(workspace.relative(key), encode(content, encoding, what=key), mode=mode)
    return [{"path": key, "blocks": entry[3]} for key, entry in files.items()]
