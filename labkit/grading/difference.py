"""Where a learner's value first differs from the expected one, said so that it can be seen.

Two conversations can print alike (a summary of roles and sizes, or two long JSON texts cut
to the same window) and still differ, in one field of one message. ``first_difference``
walks both values together and returns the first place they part: the path to it (``[3]
['tool_calls']``), and what each side holds there, a key missing on one side included.
JSON text inside a value (a tool message's ``content``) is read as JSON on both sides, so
the difference is named inside it rather than at a character. ``difference_line`` writes
that as the line the feedback prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .isolated import unchanged


class _Missing:
    def __repr__(self) -> str:
        return "(nothing there)"


#: What a side holds where the other has a key or an item it lacks.
MISSING = _Missing()


@dataclass(frozen=True)
class Difference:
    """The first place two values part: the path to it and each side's value there."""

    path: str  # "" for the values themselves
    got: object
    expected: object
    key: object = None  # the last key or index of the path (None for the values themselves)

    @property
    def missing(self) -> bool:
        """True when the learner's value lacks what was expected there."""
        return self.got is MISSING


def first_difference(got, expected, path: str = "") -> Difference | None:
    """The first place ``got`` and ``expected`` differ (dict keys in the expected order, then
    keys only ``got`` has, then the order of the keys; list items in order, then the shorter
    list's end), or None when they are the same (``unchanged``: types and key order
    included)."""
    if unchanged(got, expected):
        return None
    if isinstance(got, dict) and isinstance(expected, dict):
        for key in expected:
            where = f"{path}[{key!r}]"
            if key not in got:
                return Difference(where, MISSING, expected[key], key)
            found = first_difference(got[key], expected[key], where)
            if found:
                return found
        extra = [key for key in got if key not in expected]
        if extra:
            return Difference(f"{path}[{extra[0]!r}]", got[extra[0]], MISSING, extra[0])
        return Difference(f"{path} (the order of its keys)", list(got), list(expected))
    if isinstance(got, list) and isinstance(expected, list):
        for index, (mine, theirs) in enumerate(zip(got, expected)):
            found = first_difference(mine, theirs, f"{path}[{index}]")
            if found:
                return found
        index = min(len(got), len(expected))
        if len(got) < len(expected):
            return Difference(f"{path}[{index}]", MISSING, expected[index], index)
        return Difference(f"{path}[{index}]", got[index], MISSING, index)
    if isinstance(got, str) and isinstance(expected, str):
        inside = _json_difference(got, expected, path)
        if inside:
            return inside
    return Difference(path, got, expected)


def _json_difference(got: str, expected: str, path: str) -> Difference | None:
    """The difference inside two JSON texts that hold objects or lists, if both are JSON."""
    try:
        mine, theirs = json.loads(got), json.loads(expected)
    except (ValueError, RecursionError):
        return None
    if not isinstance(theirs, (dict, list)) or not isinstance(mine, (dict, list)):
        return None
    return first_difference(mine, theirs, f"{path} (as JSON)")


def difference_line(got, expected, limit: int = 160) -> str | None:
    """``at [3]['tool_calls']: yours has (no such key), expected [...]``, or None when the
    values are the same or are two plain values (their got/expected lines say it all)."""
    found = first_difference(got, expected)
    if found is None or not found.path:
        return None
    return (
        f"at {found.path}: yours has {_short(found.got, limit)}, "
        f"expected {_short(found.expected, limit)}"
    )


def _short(value, limit: int) -> str:
    text = repr(value)
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]}"
