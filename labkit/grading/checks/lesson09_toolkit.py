"""Lesson 09's checks: one exact edit of a text (9a), and Aider's SEARCH/REPLACE blocks read
into edits or a named error (9b, in linear time).

The expected values come from small references written here from the lesson's rules
(``edit_reference``, ``blocks_reference``), not from ``labkit.harness.edits`` or
``labkit.harness.search_replace``, the code the lesson teaches.
"""

from __future__ import annotations

import inspect
import random

from ..feedback import Case, check_linear_time, run_cases, show
from .common import hidden_cases, learner_answer, with_drawn

__all__ = ["check_apply_edit", "check_parse_search_replace"]


# --- 9a: apply_edit --------------------------------------------------------------------------


def edit_reference(text: str, old: str, new: str, replace_all: bool = False):
    """The new text, or ``("raises", name)``: the lesson's rules for one edit."""
    if old == "":
        return ("raises", "EmptyOld")
    newline = "\r\n" if "\r\n" in text[: text.find("\n") + 1] and text.find("\n") > 0 else "\n"
    old = old.replace("\r\n", "\n").replace("\n", newline)
    new = new.replace("\r\n", "\n").replace("\n", newline)
    starts = [i for i in range(len(text) - len(old) + 1) if text[i : i + len(old)] == old]
    if not starts:
        return ("raises", "NotFound")
    overlapping = any(b - a < len(old) for a, b in zip(starts, starts[1:]))
    if len(starts) > 1 and (not replace_all or overlapping):
        return ("raises", "NotUnique")
    out, last = [], 0
    for start in starts if replace_all else starts[:1]:
        out.append(text[last:start] + new)
        last = start + len(old)
    return "".join(out) + text[last:]


EDIT_CASES = [
    ("one occurrence", ["a = 1\nb = 2\n", "b = 2", "b = 3"], "replace the one occurrence"),
    ("text that is not there", ["a = 1\n", "a = 2", "b"], "nothing to replace: raise NotFound"),
    (
        "two occurrences",
        ["x = 1\ny = 2\nx = 1\n", "x = 1", "x = 0"],
        "which one did the model mean? Raise NotUnique rather than guess (str.replace "
        "would change both)",
    ),
    (
        "two occurrences, replace_all",
        ["x = 1\ny = 2\nx = 1\n", "x = 1", "x = 0", True],
        "replace_all replaces every occurrence",
    ),
    ("an empty old", ["abc\n", "", "x"], "an empty old occurs everywhere: raise EmptyOld"),
    (
        "several lines",
        [
            "def f():\n    return 1\n\nprint(f())\n",
            "def f():\n    return 1\n",
            "def f():\n    return 2\n",
        ],
        "old may span several lines, newlines included",
    ),
]
EDIT_CASES += [
    (
        "overlapping occurrences",
        ["aaa", "aa", "b"],
        '"aa" occurs twice in "aaa" (at 0 and at 1): count overlapping occurrences '
        "(text.count does not)",
    ),
    (
        "CRLF text",
        ["one\r\ntwo\r\nthree\r\n", "two\nthree\n", "2\n3\n"],
        "the text's lines end with CRLF: match and write the edit's newlines as CRLF",
    ),
]


def _drawn_edit(draw: random.Random) -> list:
    words = ["x", "y", "ab", "ba", "a", "= 1", "\n", " "]
    text = "".join(draw.choices(words, k=draw.randrange(4, 30)))
    if draw.random() < 0.3:
        text = text.replace("\n", "\r\n")
    start = draw.randrange(len(text))
    old = text[start : start + draw.randrange(1, 6)] if draw.random() < 0.8 else "zz"
    return [text, old, draw.choice(["", "Q", "R\nS"]), draw.random() < 0.3]


def check_apply_edit(apply_edit, *, hidden: bool = False) -> None:
    """``apply_edit(text, old, new, replace_all=False)`` edits exactly, or raises by name."""
    answer = learner_answer(apply_edit, "apply_edit")
    listed, _ = with_drawn(
        EDIT_CASES, hidden_cases("check_apply_edit") if hidden else [], _drawn_edit
    )
    cases = []
    for label, arguments, hint in listed:
        expected = edit_reference(*arguments)
        raises = expected[1] if isinstance(expected, tuple) else None
        cases.append(
            Case(
                label,
                arguments,
                None if raises else expected,
                hint=hint,
                raises=raises,
                shown=f"{answer.name}({', '.join(show(a, 80) for a in arguments)})",
            )
        )
    run_cases(answer, cases, _edit_problem, what="apply_edit")


def _edit_problem(got, case, outcome) -> str | None:
    text, old, new = case.arguments[:3]
    if type(got) is not str:
        return f"return the new text (a str), not {show(got, 60)}"
    if got == case.expected:
        return None
    if "\r\n" in text and got.count("\r\n") != case.expected.count("\r\n"):
        return (
            "the line endings changed: keep the text's CRLF, and write the edit's newlines as CRLF"
        )
    if got == text.replace(old, new):
        return "str.replace changes every occurrence; the rules change exactly one"
    return "the result is not the text with old replaced by new as the rules say"


# --- 9b: parse_search_replace ----------------------------------------------------------------

SEARCH, DIVIDER, REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"


def blocks_reference(text: str):
    """The edits of ``text``, or ``("raises", name)``: the lesson's rules, one pass."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    edits, path, previous, i = [], None, None, 0
    while i < len(lines):
        marker = lines[i].rstrip()
        if marker == REPLACE:
            return ("raises", "StrayMarker")
        if marker != SEARCH:
            if marker and not marker.startswith("```"):
                path = lines[i].strip()
            i += 1
            continue
        path = path if path is not None else previous
        if path is None:
            return ("raises", "MissingPath")
        j = i + 1
        while j < len(lines) and lines[j].rstrip() not in (DIVIDER, SEARCH, REPLACE):
            j += 1
        if j == len(lines) or lines[j].rstrip() != DIVIDER:
            return ("raises", "MissingDivider")
        k = j + 1
        while k < len(lines) and lines[k].rstrip() not in (REPLACE, SEARCH):
            k += 1
        if k == len(lines) or lines[k].rstrip() != REPLACE:
            return ("raises", "UnclosedBlock")
        edits.append(
            {
                "path": path,
                "search": "".join(line + "\n" for line in lines[i + 1 : j]),
                "replace": "".join(line + "\n" for line in lines[j + 1 : k]),
            }
        )
        previous, path, i = path, None, k + 1
    return edits


_BLOCKS_REFERENCE = (
    f"SEARCH, DIVIDER, REPLACE = {SEARCH!r}, {DIVIDER!r}, {REPLACE!r}\n"
    + inspect.getsource(blocks_reference)
)


def block(path: str | None, search: str, replace: str) -> str:
    head = f"{path}\n" if path is not None else ""
    return f"{head}{SEARCH}\n{search}{DIVIDER}\n{replace}{REPLACE}\n"


FIX = block("path_rules.py", "        path = PurePosixPath(name)\n",
            "        path = PurePosixPath(name.replace('\\\\', '/'))\n")  # fmt: skip
PARSE_CASES = [
    ("one block", FIX, "the path line, the SEARCH lines, the REPLACE lines"),
    (
        "prose and a fence around it",
        "I fix it.\n\npath_rules.py\n```python\n" + FIX.split("\n", 1)[1] + "```\n",
        "the path is the last line above SEARCH that is neither blank nor a fence",
    ),
    ("no block", "Nothing to change.\n", "text without blocks gives an empty list"),
    ("no path", block(None, "a\n", "b\n"), "a first block with no path line: MissingPath"),
    (
        "no divider",
        f"f.py\n{SEARCH}\na\nb\n{REPLACE}\n",
        "REPLACE came before any =======: MissingDivider",
    ),
    (
        "not closed",
        f"f.py\n{SEARCH}\na\n{DIVIDER}\nb\n",
        "the text ends inside the block: UnclosedBlock",
    ),
    (
        "a stray REPLACE",
        f"f.py\na\n{DIVIDER}\nb\n{REPLACE}\n",
        "REPLACE outside a block: StrayMarker",
    ),
    (
        "a second block without a path",
        block("a.py", "1\n", "2\n") + block(None, "3\n", "4\n"),
        "no path above the second block: it is for the previous block's file",
    ),
]
PARSE_CASES += [
    (
        "a ======= line inside the replaced code",
        block("doc.rst", "Title\n", "Title\n=======\n"),
        "in the REPLACE part only >>>>>>> REPLACE ends the block: ======= there is text",
    ),
    ("CRLF input", FIX.replace("\n", "\r\n"), "a CR ending a line is part of its CRLF line ending"),
]
#: The linear-time check: answers with this many blocks (two texts of each size).
PARSE_TIMING = {"sizes": [200, 3_200], "repeats": 2}


def _many_blocks(draw: random.Random, count: int) -> str:
    parts = []
    for n in range(count):
        body = "".join(f"    line {draw.randrange(10**6)}\n" for _ in range(draw.randrange(1, 6)))
        parts.append(f"Change {n}:\n" + block(f"src/m{n % 7}.py", body, body.upper()))
    return "".join(parts)


def _drawn_parse(draw: random.Random) -> str:
    pieces = [
        "prose\n", "```\n", "f.py\n", f"{SEARCH}\n", f"{DIVIDER}\n", f"{REPLACE}\n", "x = 1\n",
        "\n", "g.py\r\n",
    ]  # fmt: skip
    if draw.random() < 0.5:
        return "".join(block(draw.choice(["a.py", None]), "s\n", "r\n") for _ in range(3))
    return "".join(draw.choices(pieces, k=draw.randrange(3, 14)))


def check_parse_search_replace(parse_search_replace, *, hidden: bool = False) -> None:
    """``parse_search_replace(text)`` reads blocks or raises by name, in linear time."""
    answer = learner_answer(parse_search_replace, "parse_search_replace")
    listed, draw = with_drawn(
        PARSE_CASES, hidden_cases("check_parse_search_replace") if hidden else [], _drawn_parse
    )
    cases = []
    for label, text, hint in listed:
        expected = blocks_reference(text)
        raises = expected[1] if isinstance(expected, tuple) else None
        cases.append(
            Case(
                label,
                [text],
                None if raises else expected,
                hint=hint,
                raises=raises,
                shown=f"{answer.name}({show(text, 160)})",
            )  # fmt: skip
        )
    run_cases(answer, cases, _parse_problem, what="parse_search_replace")
    inputs = {
        size: [[_many_blocks(draw, size)] for _ in range(PARSE_TIMING["repeats"])]
        for size in PARSE_TIMING["sizes"]
    }
    check_linear_time(
        answer,
        (_BLOCKS_REFERENCE, "blocks_reference"),
        inputs,
        lambda arguments: blocks_reference(*arguments),
        what="answers",
        unit="blocks",
        min_seconds=0.005,
        hint="split the text into lines once and walk them with an index; taking lines "
        "off the front of a list (pop(0)) or splitting the rest of the text again for "
        "each block copies it over and over",
    )


def _parse_problem(got, case, outcome) -> str | None:
    if type(got) is not list or not all(type(edit) is dict for edit in got):
        return f"return a list of dicts (path, search, replace), not {show(got, 60)}"
    if got == case.expected:
        return None
    if len(got) != len(case.expected):
        return f"{len(got)} block(s) read, but the text holds {len(case.expected)}"
    for mine, theirs in zip(got, case.expected):
        if set(mine) != {"path", "search", "replace"}:
            return "each edit is a dict with exactly 'path', 'search' and 'replace'"
        for key in ("path", "search", "replace"):
            if mine[key] != theirs[key]:
                if "\r" in mine[key]:
                    return f"'{key}' keeps a CR: a CR ending a line belongs to its line ending"
                return f"a block's '{key}' is {show(mine[key], 60)}, not {show(theirs[key], 60)}"
    return "the edits are not the ones the rules read"
