"""Chunks: a function or class each, long classes by method, the rest by runs of lines;
every non-blank line in exactly one chunk."""

from labkit.harness import chunking
from labkit.harness.chunking import chunk_files, chunk_source

SOURCE = '''"""A module."""
import os


@decorated
def first(a):
    return a


class Small:
    x = 1

    def m(self):
        return 2
'''


def spans(chunks):
    return [(c.start, c.end, c.name) for c in chunks]


def test_functions_and_classes_with_their_decorators_and_the_rest_by_lines():
    chunks = chunk_source("pkg/mod.py", SOURCE)
    assert spans(chunks) == [(1, 2, "lines 1-2"), (5, 7, "first"), (10, 14, "Small")]
    assert chunks[1].text == "@decorated\ndef first(a):\n    return a"
    assert chunks[1].label == "pkg/mod.py:5-7 first"


def test_a_long_class_is_cut_into_its_head_and_its_methods(monkeypatch):
    monkeypatch.setattr(chunking, "MAX_LINES", 3)
    assert spans(chunk_source("m.py", SOURCE))[2:] == [(10, 12, "Small"), (13, 14, "Small.m")]


def test_other_text_and_broken_python_go_by_windows_of_lines(monkeypatch):
    monkeypatch.setattr(chunking, "WINDOW", 2)
    text = "a\nb\nc\n\n\nd\n"
    assert spans(chunk_source("notes.md", text)) == [(1, 2, "lines 1-2"), (3, 3, "lines 3-3"),
                                                     (6, 6, "lines 6-6")]  # fmt: skip
    assert spans(chunk_source("broken.py", "def (:\n  x\n")) == [(1, 2, "lines 1-2")]
    assert chunk_source("empty.py", "") == [] and chunk_source("blank.txt", "\n\n  \n") == []


def test_every_non_blank_line_is_in_exactly_one_chunk():
    from labkit.harness.project import PROJECT

    for path in ("ledger/models.py", "ledger/dates.py", "tests/test_reports.py"):
        text = (PROJECT.folder / path).read_text()
        lines = text.splitlines()
        seen = [n for c in chunk_source(path, text) for n in range(c.start, c.end + 1)]
        assert len(seen) == len(set(seen))
        assert {n for n, line in enumerate(lines, 1) if line.strip()} <= set(seen)


def test_only_indexed_names_small_files_and_text_are_chunked():
    files = [("a.py", b"def f():\n    pass\n"), ("image.png", b"def f(): pass"),
             ("big.py", b"x = 1\n" * 40_000), ("nul.py", b"x = 1\0\n"),
             ("README.md", b"Hi\n")]  # fmt: skip
    found = [(c.path, c.name) for c in chunk_files(files)]
    assert found == [("a.py", "f"), ("README.md", "lines 1-1")]
