"""How messages name things: "an int", "1 case". Every message that names a type or counts
something goes through these, so the checks below hold for all of them."""

import re
from pathlib import Path

from labkit.harness.words import counted, with_article

LABKIT = Path(__file__).resolve().parents[2] / "labkit"


def test_a_noun_gets_the_article_it_is_said_with():
    assert [with_article(n) for n in ("int", "list", "Anything", "object", "str")] == [
        "an int",
        "a list",
        "an Anything",
        "an object",
        "a str",
    ]


def test_a_count_is_singular_only_for_one():
    assert counted(1, "case") == "1 case"
    assert counted(0, "case") == "0 cases"
    assert counted(2, "old result") == "2 old results"
    assert counted(1_000, "match", "matches") == "1,000 matches"


def test_no_message_writes_an_article_before_a_type_name_it_does_not_know():
    """A message that writes "a " before a type's name says "a int": the names go through
    ``with_article`` (or ``kind`` for JSON values)."""
    pattern = re.compile(r"""\ban? \{type\(|\(an? \{[\w.]*type""")
    found = [
        f"{path.relative_to(LABKIT)}:{number}: {line.strip()}"
        for path in LABKIT.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
