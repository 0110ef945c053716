"""How the harness's messages name things in English: a noun with its article, a count with
its noun. One place, so that no message says "a int" or "1 cases"."""

from __future__ import annotations


def with_article(noun: str) -> str:
    """``noun`` after "a" or "an", as it is said: a list, an int, an object."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` and ``noun``, plural unless the number is 1: "1 case", "3 cases",
    "2 old results"; ``plural`` for a noun whose plural is not ``noun + "s"``."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"
