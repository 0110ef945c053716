"""Where two JSON values first part, said so that a person can see it: the path to the place
(``tool_calls[0].function.arguments.path``, ``content, character 31``) and what each side holds
there, cut to a readable length around the difference.

The values compare as JSON does: a read-only (frozen) dict or list is a dict or a list, and
``1`` is ``1.0``. Dict keys are visited in sorted order (``role`` first, as a message is read),
list items in order, then a shorter list's end. A replay names with it the first difference
between a request and the recorded one, between a replayed event and the recorded one, and
between a recording's chunk and the line it kept for it.
"""

from __future__ import annotations

import json
from typing import NamedTuple

#: What a side holds where the other has a key it lacks.
NOTHING = "nothing"


class Place(NamedTuple):
    """The first place two values part: its path ("" for the values themselves) and an
    excerpt of each side there (the first value's, then the other's)."""

    path: str
    first: str
    other: str

    @property
    def where(self) -> str:
        """The path, or "the top" for the values themselves."""
        return self.path or "the top"


def where_different(first, other, path: str = "") -> Place | None:
    """The first place ``first`` and ``other`` differ, or None when they are equal as JSON."""
    both_numbers = all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in (first, other)
    )
    if _json_kind(first) is not _json_kind(other) and not both_numbers:
        return Place(path, excerpt(first), excerpt(other))
    if isinstance(first, dict):
        for key in sorted(set(first) | set(other), key=lambda k: (k != "role", k)):
            where = f"{path}.{key}" if path else key
            if key not in first or key not in other:
                return Place(
                    where,
                    excerpt(first[key]) if key in first else NOTHING,
                    excerpt(other[key]) if key in other else NOTHING,
                )
            place = where_different(first[key], other[key], where)
            if place:
                return place
        return None
    if isinstance(first, list):
        for position, (a, b) in enumerate(zip(first, other)):
            place = where_different(a, b, f"{path}[{position}]")
            if place:
                return place
        if len(first) != len(other):
            return Place(path, items(len(first)), items(len(other)))
        return None
    if isinstance(first, str) and first != other:
        at = next(
            (i for i, (a, b) in enumerate(zip(first, other)) if a != b),
            min(len(first), len(other)),
        )
        return Place(f"{path}, character {at}", excerpt(first, at), excerpt(other, at))
    return None if first == other else Place(path, excerpt(first), excerpt(other))


def items(count: int) -> str:
    """``1 item``, ``3 items``."""
    return f"{count} item{'' if count == 1 else 's'}"


def _json_kind(value) -> type:
    """The JSON kind of a value: a frozen dict or list (``labkit.harness.frozen``) is a dict or
    a list."""
    return dict if isinstance(value, dict) else list if isinstance(value, list) else type(value)


def excerpt(value, at: int | None = None, before: int = 30, after: int = 50) -> str:
    """A value as JSON text, at most ``before + after`` characters of it; for a string and a
    position ``at``, the text around that position. Cut ends are marked with ``…``."""
    if at is None:
        text = json.dumps(value, ensure_ascii=False, default=repr)
        return text if len(text) <= before + after else text[: before + after] + "…"
    start = max(0, at - before)
    piece = json.dumps(value[start : at + after], ensure_ascii=False)
    return ("…" if start else "") + piece + ("…" if at + after < len(value) else "")
