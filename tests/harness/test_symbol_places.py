"""A server's locations as the model reads them: workspace paths, 1-based lines, sorted,
capped, nothing outside the workspace shown."""

from pathlib import PurePosixPath

from labkit.harness.symbol_places import column_of, context, places, workspace_path

ROOT = PurePosixPath("/tmp/copy")


def at(uri, line, character=0):
    position = {"line": line, "character": character}
    return {"uri": uri, "range": {"start": position, "end": position}}


def test_uris_inside_the_root_become_relative_paths():
    assert workspace_path("file:///tmp/copy/ledger/a%20b.py", ROOT) == "ledger/a b.py"
    assert workspace_path("file://localhost/tmp/copy/x.py", ROOT) == "x.py"
    for outside in ("file:///tmp/copy2/x.py", "file:///tmp/copy", "file:///usr/lib/x.py",
                    "file:///tmp/copy/../etc/passwd", "http://tmp/copy/x.py", "file://host/tmp/copy/x.py",
                    "ledger/x.py", None, 3):  # fmt: skip
        assert workspace_path(outside, ROOT) is None, outside


def test_places_are_one_based_sorted_capped_and_outside_ones_counted():
    raw = [at("file:///tmp/copy/b.py", 9), at("file:///tmp/copy/a.py", 40, 3),
           at("file:///tmp/copy/a.py", 4), at("file:///usr/lib/python3/typing.pyi", 1),
           {"uri": "file:///tmp/copy/c.py"}, "junk", at("file:///tmp/copy/c.py", -1)]  # fmt: skip
    assert places(raw, ROOT, cap=2) == {
        "count": 3,
        "places": [{"path": "a.py", "line": 5}, {"path": "a.py", "line": 41}],
        "more": "and 1 more",
        "outside": 3,
    }


def test_one_location_and_location_links_are_read_too():
    link = {"targetUri": "file:///tmp/copy/m.py",
            "targetSelectionRange": {"start": {"line": 0, "character": 4}}}  # fmt: skip
    assert places(link, ROOT) == {"count": 1, "places": [{"path": "m.py", "line": 1}]}
    assert places(None, ROOT) == {"count": 0, "places": []}


def test_columns_count_utf16_code_units_and_whole_words():
    assert column_of("    ledger.between(a)", "Ledger.between") == 11
    assert column_of("é = between_days(between)", "between") == 17
    assert column_of("😀 = parse(x)", "parse") == 5
    assert column_of("nothing here", "parse") is None and column_of("x", "1bad") is None


def test_context_is_stripped_and_cut():
    assert context("   x = 1  ") == "x = 1"
    assert context("y" * 200) == "y" * 120 + " [...]"


def test_the_harness_and_exercise_13b_s_reference_agree_on_drawn_cases():
    import random

    from labkit.grading.checks.lesson13_finding_code import (
        ROOT as CHECK_ROOT,
    )
    from labkit.grading.checks.lesson13_finding_code import (
        compact_references,
        drawn_locations,
    )

    draw = random.Random(13)
    for _ in range(300):
        locations, cap = drawn_locations(draw)
        expected = compact_references(locations, CHECK_ROOT, cap)
        assert places(locations, PurePosixPath(CHECK_ROOT), cap) == expected
