"""A workspace cut into chunks for retrieval: by function and class where the code allows,
else by lines.

A retriever ranks pieces of the code base, not whole files: a file is too long to inject,
and a line is too short to mean anything. ``chunk_source`` cuts one file:

- Python that parses: each top-level function is a chunk (its decorators included), and so
  is each class; a class longer than ``MAX_LINES`` is cut again, its head (the lines
  before its first method) and each method a chunk of its own (``Ledger.between``);
- the lines no definition covers (the module's docstring, its imports, its constants) and
  any other text file (or Python that does not parse) are cut into runs of consecutive
  lines, at most ``WINDOW`` lines each, blank lines at a run's ends left out.

Every non-blank line of a file is in exactly one chunk, chunks are in file order, and
each knows its path, its first and last line (from 1) and a name. ``chunk_files`` cuts
the files a workspace's walk lists (``workspace.py``: no links, no hidden names), those
whose names end as ``INDEXED`` says and that are at most ``MAX_FILE_BYTES``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

MAX_LINES = 60  # a class longer than this is cut into its head and its methods
WINDOW = 40  # lines of a chunk cut by lines
MAX_FILE_BYTES = 200_000  # a larger file is not indexed
INDEXED = (".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".ini", ".cfg")


@dataclass(frozen=True)
class Chunk:
    """A piece of one file: ``path``, its lines ``start`` to ``end`` (from 1, both included),
    a ``name`` (``parse_date``, ``Ledger.between``, ``lines 1-12``) and its ``text``."""

    path: str
    start: int
    end: int
    name: str
    text: str

    @property
    def label(self) -> str:
        """How the chunk is named to the model: ``ledger/models.py:98-100 Ledger.between``."""
        return f"{self.path}:{self.start}-{self.end} {self.name}"


def chunk_source(path: str, text: str) -> list[Chunk]:
    """The chunks of one file, in file order."""
    lines = text.splitlines()
    spans: list[tuple[int, int, str]] = []  # (start, end, name), lines from 1
    if PurePosixPath(path).suffix in (".py", ".pyi"):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):  # ValueError: a NUL byte in the source
            tree = None
        if tree is not None:
            spans = _definitions(tree)
    covered = set()
    for start, end, _ in spans:
        covered.update(range(start, end + 1))
    spans += _runs([n for n in range(1, len(lines) + 1) if n not in covered], lines)
    spans.sort()
    return [
        Chunk(path, start, end, name, "\n".join(lines[start - 1 : end]))
        for start, end, name in spans
    ]


def _definitions(tree: ast.Module) -> list[tuple[int, int, str]]:
    spans = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            spans.append((_first_line(node), node.end_lineno or node.lineno, node.name))
        elif isinstance(node, ast.ClassDef):
            start, end = _first_line(node), node.end_lineno or node.lineno
            methods = [
                item
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
            if end - start + 1 <= MAX_LINES or not methods:
                spans.append((start, end, node.name))
                continue
            head_end = _first_line(methods[0]) - 1
            spans.append((start, head_end, node.name))
            for method in methods:
                last = method.end_lineno or method.lineno
                spans.append((_first_line(method), last, f"{node.name}.{method.name}"))
    return spans


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [decorator.lineno for decorator in decorators])


def _runs(numbers: list[int], lines: list[str]) -> list[tuple[int, int, str]]:
    """``numbers`` (sorted) in runs of consecutive lines, each at most ``WINDOW`` long,
    without the blank lines at either end, named by their lines; all-blank runs dropped."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1 and len(runs[-1]) < WINDOW:
            runs[-1].append(number)
        else:
            runs.append([number])
    spans = []
    for run in runs:
        kept = [number for number in run if lines[number - 1].strip()]
        if kept:
            spans.append((kept[0], kept[-1], f"lines {kept[0]}-{kept[-1]}"))
    return spans


def chunk_files(files: Iterable[tuple[str, bytes]]) -> list[Chunk]:
    """The chunks of ``(path, bytes)`` pairs that are indexed (by name and size), in order."""
    chunks: list[Chunk] = []
    for path, data in files:
        if path.endswith(INDEXED) and len(data) <= MAX_FILE_BYTES and b"\0" not in data:
            chunks.extend(chunk_source(path, data.decode("utf-8", errors="replace")))
    return chunks
