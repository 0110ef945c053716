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


#: A JSON value's kind, as a message says what a value was instead of what it should be.
JSON_KINDS = {
    dict: "an object",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
}


def json_kind(value: object, *, none: str = "null") -> str:
    """A value's kind in a few words: "an object", "a number", ``none`` for None, and any
    other type by its name with its article ("a tuple", "an Other")."""
    if value is None:
        return none
    return JSON_KINDS.get(type(value)) or with_article(type(value).__name__)
