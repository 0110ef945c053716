"""Aider's SEARCH/REPLACE blocks: read into edits or a named error for each malformed
shape; applied all or nothing, with near misses named, never applied."""

import pytest

from labkit import sample_copy
from labkit.harness.edits import NotFound, NotUnique
from labkit.harness.search_replace import (
    MissingDivider,
    MissingPath,
    NoBlocks,
    ReadOnlyFile,
    StrayMarker,
    UnclosedBlock,
    UnknownFile,
    apply_search_replace,
    parse_search_replace,
)
from labkit.harness.workspace import Workspace

FIX = """I will fix it.

path_rules.py
```python
<<<<<<< SEARCH
        path = PurePosixPath(name)
=======
        path = PurePosixPath(name.replace("\\\\", "/"))
>>>>>>> REPLACE
```
"""


def edits(text):
    return [block.as_dict() for block in parse_search_replace(text)]


def test_one_block_after_prose_and_a_fence():
    assert edits(FIX) == [
        {
            "path": "path_rules.py",
            "search": "        path = PurePosixPath(name)\n",
            "replace": '        path = PurePosixPath(name.replace("\\\\", "/"))\n',
        }
    ]
    block = parse_search_replace(FIX)[0]
    assert (block.path_line, block.line, block.divider, block.end) == (3, 5, 7, 9)


def test_several_blocks_for_several_files_and_a_second_block_without_a_path():
    text = "a.py\n<<<<<<< SEARCH\n1\n=======\n2\n>>>>>>> REPLACE\n\n" + (
        "<<<<<<< SEARCH\n3\n=======\n4\n>>>>>>> REPLACE\nb.py\n<<<<<<< SEARCH\n=======\nnew\n"
        ">>>>>>> REPLACE\n"
    )
    assert edits(text) == [
        {"path": "a.py", "search": "1\n", "replace": "2\n"},
        {"path": "a.py", "search": "3\n", "replace": "4\n"},
        {"path": "b.py", "search": "", "replace": "new\n"},
    ]


def test_a_block_without_a_trailing_newline_and_crlf_input_read_the_same():
    plain = "f.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n"
    expected = [{"path": "f.py", "search": "old\n", "replace": "new\n"}]
    assert edits(plain.rstrip("\n")) == expected
    assert edits(plain.replace("\n", "\r\n")) == expected


def test_a_divider_line_inside_the_replacement_is_text():
    text = "doc.rst\n<<<<<<< SEARCH\nTitle\n=======\nTitle\n=======\n>>>>>>> REPLACE\n"
    assert edits(text) == [{"path": "doc.rst", "search": "Title\n", "replace": "Title\n=======\n"}]


@pytest.mark.parametrize(
    "text,error,line",
    [
        ("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", MissingPath, 1),
        ("f.py\n<<<<<<< SEARCH\na\nb\n>>>>>>> REPLACE\n", MissingDivider, 2),
        ("f.py\n<<<<<<< SEARCH\na\n", MissingDivider, 2),
        ("f.py\n<<<<<<< SEARCH\na\n=======\nb\n", UnclosedBlock, 2),
        ("f.py\n<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\n", UnclosedBlock, 2),
        ("f.py\na\n=======\nb\n>>>>>>> REPLACE\n", StrayMarker, 5),
    ],
)
def test_each_malformed_shape_has_its_named_error_and_line(text, error, line):
    with pytest.raises(error) as raised:
        parse_search_replace(text)
    assert raised.value.line == line


def test_text_without_blocks_is_an_empty_list():
    assert parse_search_replace("No changes are needed.\n=======\n") == []


def test_reading_is_one_pass_a_million_lines_of_prose_are_fine():
    assert parse_search_replace("prose\n" * 1_000_000) == []


def applied(text):
    with sample_copy() as root:
        workspace = Workspace(root, read_only=("tests",))
        before = (root / "path_rules.py").read_bytes()
        try:
            return apply_search_replace(workspace, text), (root / "path_rules.py").read_bytes()
        except ValueError as exc:
            assert (root / "path_rules.py").read_bytes() == before  # nothing written
            raise exc


def test_a_good_block_is_applied():
    rows, data = applied(FIX)
    assert rows == [{"path": "path_rules.py", "blocks": 1}]
    assert b'PurePosixPath(name.replace("\\\\", "/"))' in data


@pytest.mark.parametrize(
    "text,error,words",
    [
        ("nothing here", NoBlocks, "no SEARCH/REPLACE block"),
        (FIX.replace("path_rules.py\n", "paths.py\n"), UnknownFile, "does not exist"),
        (FIX.replace("path_rules.py\n", "../x.py\n"), UnknownFile, "leaves the workspace"),
        (FIX.replace("path_rules.py\n", "tests/test_path_rules.py\n"), ReadOnlyFile, "read-only"),
        (FIX.replace("(name)\n=", "(nme)\n="), NotFound, "closest line is 10"),
        (FIX.replace("        path = PurePosixPath(name)\n=", "\n="), NotUnique, "occurs"),
    ],
)
def test_a_block_that_cannot_apply_changes_no_file_and_says_why(text, error, words):
    with pytest.raises(error, match=words):
        applied(text)


def test_a_second_bad_block_keeps_the_first_good_one_from_being_written():
    bad = "path_rules.py\n<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE\n"
    with pytest.raises(NotFound, match="block 2"):
        applied(FIX + bad)
