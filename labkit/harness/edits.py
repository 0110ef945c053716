"""One exact edit of a text, and how a file's bytes become text and back unchanged.

``apply_edit(text, old, new, replace_all=False)`` is the rule the ``edit`` tool and the
SEARCH/REPLACE host share (lesson 09; exercise 9a writes it):

1. ``old`` must not be empty (``EmptyOld``): an empty text occurs everywhere.
2. Its occurrences are counted **overlapping** ones included: ``"aa"`` occurs twice in
   ``"aaa"`` (at 0 and at 1), and replacing "the" one would be a guess.
3. None: ``NotFound``, with the closest lines as a hint, never a fuzzy apply. More than
   one without ``replace_all``: ``NotUnique``, saying how many and on which lines.
4. ``replace_all`` replaces every occurrence, unless two of them overlap (``NotUnique``:
   which of them would be replaced is a guess too).
5. Line endings are the text's: when its first line ends with CRLF, every newline of
   ``old`` and ``new`` is matched and written as CRLF; the rest of the text is untouched.

Every error is a ``ValueError`` (the loop turns it into a result the model reads) whose
text says what to do next. ``decode``/``encode`` keep a file's encoding: UTF-8 (with or
without its byte-order mark), UTF-16 with a mark, and anything else as Latin-1, which
gives back every byte as it was.
"""

from __future__ import annotations

import codecs
import difflib

#: How many lines an error names at most.
SHOWN_LINES = 10
#: How alike a window of lines must be to the missing text to be offered as "the closest".
CLOSE_ENOUGH = 0.6


class EditError(ValueError):
    """An edit that was not made; the text says why and what to do."""


class EmptyOld(EditError):
    """``old`` was empty."""


class NotFound(EditError):
    """``old`` does not occur; ``closest`` is the lines most like it, if any are close."""

    def __init__(self, message: str, closest: tuple[int, int] | None = None) -> None:
        super().__init__(message)
        self.closest = closest


class NotUnique(EditError):
    """``old`` occurs ``count`` times, on ``lines``; ``overlapping`` when occurrences overlap."""

    def __init__(self, message: str, count: int, lines: list[int], overlapping: bool) -> None:
        super().__init__(message)
        self.count, self.lines, self.overlapping = count, lines, overlapping


def newline_of(text: str) -> str:
    """``"\\r\\n"`` when the text's first line ends with CRLF, else ``"\\n"``."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def with_newline(text: str, newline: str) -> str:
    """``text`` with every newline (LF or CRLF) written as ``newline``."""
    text = text.replace("\r\n", "\n")
    return text if newline == "\n" else text.replace("\n", newline)


def occurrences(text: str, old: str) -> list[int]:
    """Where ``old`` starts in ``text``, overlapping occurrences included."""
    found, start = [], text.find(old)
    while start != -1:
        found.append(start)
        start = text.find(old, start + 1)
    return found


def line_of(text: str, index: int) -> int:
    """The line (from 1) on which ``text[index]`` stands."""
    return text.count("\n", 0, index) + 1


def apply_edit(
    text: str, old: str, new: str, replace_all: bool = False, *, what: str = "the file"
) -> str:
    """``text`` with ``old`` replaced by ``new``, by the module's rules; ``what`` names the
    text in errors (``"path_rules.py"``)."""
    if not old:
        raise EmptyOld(
            "old_string is empty; copy the exact lines to change from read_file (to write a "
            "whole file, use write_file)"
        )
    newline = newline_of(text)
    old, new = with_newline(old, newline), with_newline(new, newline)
    starts = occurrences(text, old)
    if not starts:
        closest = closest_lines(text, old)
        raise NotFound(f"old_string was not found in {what}. {near_miss(closest)}", closest)
    overlapping = any(b < a + len(old) for a, b in zip(starts, starts[1:]))
    if len(starts) > 1 and (not replace_all or overlapping):
        lines = sorted({line_of(text, start) for start in starts})
        named = lines_named(lines)
        if overlapping and replace_all:
            message = (
                f"old_string occurs {len(starts)} times in {what} and some occurrences "
                f"overlap ({named}), so replace_all cannot tell which to replace; "
                "give more surrounding text"
            )
        else:
            message = (
                f"old_string occurs {len(starts)} times in {what} ({named}); add "
                "surrounding lines to old_string so that it occurs once, or set replace_all "
                "to true to replace every occurrence"
            )
        raise NotUnique(message, len(starts), lines, overlapping)
    if replace_all:
        return text.replace(old, new)
    start = starts[0]
    return text[:start] + new + text[start + len(old) :]


def lines_named(lines: list[int]) -> str:
    """``"line 4"``, ``"lines 4, 9, 12"``: at most ``SHOWN_LINES`` numbers, then ``...``."""
    more = ", ..." if len(lines) > SHOWN_LINES else ""
    word = "line" if len(lines) == 1 else "lines"
    return f"{word} " + ", ".join(map(str, lines[:SHOWN_LINES])) + more


def near_miss(found: tuple[int, int] | None) -> str:
    """A hint for a text that was not found: the lines most like it, if any are close."""
    if found is None:
        return "Read the file again and copy the text exactly, spaces included."
    first, last = found
    where = f"line is {first}" if first == last else f"lines are {first}-{last}"
    them = "it" if first == last else "them"
    return (
        f"The closest {where}: read {them} again with read_file and copy the text exactly "
        "(nothing was changed)."
    )


def closest_lines(text: str, missing: str) -> tuple[int, int] | None:
    """The lines (first, last, from 1) of ``text`` most like ``missing``, as ``difflib``
    measures it, when alike enough to suggest (``CLOSE_ENOUGH``); None otherwise. A
    window as many lines long as ``missing`` slides over the text."""
    lines = text.splitlines()
    wanted = missing.strip("\r\n").splitlines() or [""]
    size = len(wanted)
    target = "\n".join(line.strip() for line in wanted)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    best, best_ratio = None, CLOSE_ENOUGH
    for first in range(max(len(lines) - size + 1, 1)):
        matcher.set_seq1("\n".join(line.strip() for line in lines[first : first + size]))
        if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = (first + 1, min(first + size, len(lines))), ratio
    return best


# --- A file's bytes as text, and back --------------------------------------------------------

_MARKS = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def decode(data: bytes) -> tuple[str, str]:
    """``(text, encoding)``: UTF-8, UTF-16 with a byte-order mark, else Latin-1, which maps
    every byte to one character and back. A mark stays in the text (as ``"\ufeff"``), so
    encoding the text again writes it back."""
    for mark, encoding in _MARKS:
        if data.startswith(mark) and len(data) % 2 == 0:
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                break
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def encode(text: str, encoding: str, *, what: str = "the file") -> bytes:
    """``text`` in ``encoding``; a character it cannot hold is an ``EditError``."""
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise EditError(
            f"{what} is in {encoding}, which cannot hold {exc.object[exc.start : exc.end]!r}; "
            "write that character another way (an escape) or leave it out"
        ) from None
