"""Lesson 13: the same question three ways, on the larger sample.

``QUESTIONS`` are fourteen questions about ``sample_project`` of the four kinds the lesson
names (where is X defined, who calls Y, which test covers Z, what breaks if W changes its
signature), each with the files that answer it, written down by hand from reading the
code, and with the calls a model would make: a ``grep`` (the text it would search for)
and a symbols call (none for a question that names no symbol: a language server needs a
name, so there the model greps first and then asks).

``ask`` answers one question one way on a copy and says what it cost (tool calls, and
characters of the results the model reads) and which files it surfaced; ``compare`` does
it for every question and method, retrieval at several K. Precision is the share of the
surfaced files that answer; recall the share of the answering files surfaced; a question
is *found* when every answering file was surfaced. Retrieval makes no tool call, but its
characters are sent with every request of the run, asked for or not.

The embedding model's scores are rounded to four places before ranking, so that the
same chunks come first on every CPU (a sum of floats differs in its last bits from one
processor to another).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..harness.loop import call_tool
from ..harness.retrieval import WorkspaceIndex, injected

KS = (3, 5, 10)  # the retrieval depths compared


@dataclass(frozen=True)
class Question:
    """A question, its kind, the files that answer it (by hand), and the calls to ask it."""

    text: str
    kind: str
    answer: frozenset
    grep: dict
    symbols: tuple | None = None  # (tool, arguments); None: the question names no symbol


def question(text, kind, answer, grep, symbols=None) -> Question:
    return Question(text, kind, frozenset(answer), grep, symbols)


def lines(pattern: str, **more) -> dict:
    return {"pattern": pattern, "output": "lines", **more}


QUESTIONS = [
    question(
        "Where is parse_date defined?",
        "where",
        {"ledger/dates.py"},
        lines("def parse_date"),
        ("definition", {"symbol": "parse_date"}),
    ),
    question(
        "Where is the class Money defined?",
        "where",
        {"ledger/money.py"},
        lines("class Money"),
        ("definition", {"symbol": "Money"}),
    ),
    question(
        "Where is the ledger's balance on a given day worked out?",
        "where",
        {"ledger/models.py"},
        lines("def balance"),
        ("definition", {"symbol": "balance"}),
    ),
    question(
        "Where is an amount split into equal parts?",
        "where",
        {"ledger/money.py"},
        lines("def split"),
    ),
    question(
        "Where are the command line options defined?",
        "where",
        {"ledger/cli.py"},
        lines("add_argument"),
    ),
    question(
        "Who calls Ledger.between?",
        "who calls",
        {"ledger/reports.py", "ledger/budget.py"},
        lines(r"between\("),
        ("references", {"symbol": "between", "path": "ledger/models.py", "line": 98}),
    ),
    question(
        "Who calls month_range?",
        "who calls",
        {"ledger/reports.py", "ledger/budget.py", "tests/test_dates.py"},
        lines(r"month_range\("),
        ("references", {"symbol": "month_range"}),
    ),
    question(
        "Who calls next_business_day?",
        "who calls",
        {"ledger/importers.py", "tests/test_dates.py"},
        lines("next_business_day"),
        ("references", {"symbol": "next_business_day"}),
    ),
    question(
        "Which test covers split_evenly?",
        "which test",
        {"tests/test_money.py"},
        lines("split_evenly", path="tests"),
        ("references", {"symbol": "split_evenly"}),
    ),
    question(
        "Which tests cover detect_importer?",
        "which test",
        {"tests/test_importers.py", "tests/test_ledger.py"},
        lines("detect_importer", path="tests"),
        ("references", {"symbol": "detect_importer"}),
    ),
    question(
        "Which test covers check_budget?",
        "which test",
        {"tests/test_ledger.py"},
        lines("check_budget", path="tests"),
        ("references", {"symbol": "check_budget"}),
    ),
    question(
        "What breaks if Transaction.from_row changes its signature?",
        "what breaks",
        {"ledger/storage.py"},
        lines(r"from_row\("),
        ("references", {"symbol": "from_row"}),
    ),
    question(
        "What breaks if load_rules changes its signature?",
        "what breaks",
        {"ledger/cli.py"},
        lines(r"load_rules\("),
        ("references", {"symbol": "load_rules"}),
    ),
    question(
        "What breaks if round_cents changes its signature?",
        "what breaks",
        {"ledger/money.py", "tests/test_money.py"},
        lines(r"round_cents\("),
        ("references", {"symbol": "round_cents"}),
    ),
]


@dataclass(frozen=True)
class Outcome:
    """One question asked one way: the files surfaced and what it cost."""

    method: str
    question: Question
    surfaced: frozenset
    calls: int
    characters: int

    @property
    def precision(self) -> float:
        return (
            len(self.surfaced & self.question.answer) / len(self.surfaced) if self.surfaced else 0.0
        )

    @property
    def recall(self) -> float:
        return len(self.surfaced & self.question.answer) / len(self.question.answer)

    @property
    def found(self) -> bool:
        return self.question.answer <= self.surfaced


def _size(result) -> int:
    return len(json.dumps(result, ensure_ascii=False))


def _files(result: dict) -> set:
    """The files a grep or symbols result names."""
    if "lines" in result:
        return {line.split(":", 1)[0] for line in result["lines"].splitlines() if ":" in line}
    places = result.get("references", result.get("definitions", []))
    return {place["path"] for place in places}


def by_grep(kit, q: Question) -> Outcome:
    result = call_tool(kit, "grep", q.grep)
    return Outcome("grep", q, frozenset(_files(result)), 1, _size(result))


def by_symbols(kit, q: Question) -> Outcome:
    """The symbols call; without a symbol in the question, the grep that finds its name
    first, then the call on the name it found (the grep's files are what it surfaced)."""
    if q.symbols is None:
        found = by_grep(kit, q)
        return Outcome("symbols", q, found.surfaced, found.calls + 1, found.characters * 2)
    name, arguments = q.symbols
    result = call_tool(kit, name, arguments)
    return Outcome("symbols", q, frozenset(_files(result)), 1, _size(result))


def by_retrieval(index: WorkspaceIndex, q: Question, k: int) -> Outcome:
    hits = index.search(q.text, k)
    text = injected(hits, index.retriever.name)
    name = f"{index.retriever.name} K={k}"
    return Outcome(name, q, frozenset(hit.chunk.path for hit in hits), 0, len(text))


class Rounded:
    """A retriever whose scores are rounded to ``places``: the same order on every CPU."""

    def __init__(self, retriever, places: int = 4) -> None:
        self.retriever, self.places = retriever, places
        self.name = retriever.name

    def index(self, texts: Sequence[str]) -> None:
        self.retriever.index(texts)

    def scores(self, query: str) -> list[float]:
        return [round(score, self.places) for score in self.retriever.scores(query)]


def compare(kit, indexes: Iterable[WorkspaceIndex], questions=QUESTIONS, ks=KS) -> list:
    """Every question asked every way: grep, symbols, then each index at each K."""
    outcomes = []
    indexes = list(indexes)
    for q in questions:
        outcomes += [by_grep(kit, q), by_symbols(kit, q)]
        outcomes += [by_retrieval(index, q, k) for index in indexes for k in ks]
    return outcomes


def methods_table(outcomes: Sequence[Outcome]) -> str:
    """One line per method: questions found, mean precision and recall, tool calls and
    characters per question."""
    names = list(dict.fromkeys(outcome.method for outcome in outcomes))
    rows = [f"{'method':14} {'found':>7} {'precision':>9} {'recall':>6} {'calls':>5} {'chars':>6}"]
    for name in names:
        mine = [outcome for outcome in outcomes if outcome.method == name]
        n = len(mine)
        precision = sum(o.precision for o in mine) / n
        recall = sum(o.recall for o in mine) / n
        calls, chars = sum(o.calls for o in mine) / n, sum(o.characters for o in mine) / n
        rows.append(
            f"{name:14} {sum(o.found for o in mine):>3} / {n:<2} "
            f"{precision:>9.2f} {recall:>6.2f} {calls:>5.1f} {round(chars):>6}"
        )
    return "\n".join(rows)


def questions_table(outcomes: Sequence[Outcome], methods: Sequence[str]) -> str:
    """One line per question: found (yes) or not (-) by each of ``methods``."""
    header = f"{'question':58} " + " ".join(f"{m:>12}" for m in methods)
    rows = [header]
    for text in dict.fromkeys(outcome.question.text for outcome in outcomes):
        marks = []
        for method in methods:
            outcome = next(o for o in outcomes if o.question.text == text and o.method == method)
            marks.append(f"{'found' if outcome.found else '-':>12}")
        rows.append(f"{text[:58]:58} " + " ".join(marks))
    return "\n".join(rows)


def bars(outcomes: Sequence[Outcome], width: int = 30) -> str:
    """A text chart: each method's mean recall, and its characters per question (scaled to
    the largest)."""
    names = list(dict.fromkeys(outcome.method for outcome in outcomes))
    means = {}
    for name in names:
        mine = [o for o in outcomes if o.method == name]
        means[name] = (
            sum(o.recall for o in mine) / len(mine),
            sum(o.characters for o in mine) / len(mine),
        )
    most = max(chars for _, chars in means.values()) or 1
    rows = []
    for name, (recall, chars) in means.items():
        rows.append(f"{name:14} recall {'█' * round(recall * width):{width}} {recall:.2f}")
        rows.append(f"{'':14} chars  {'░' * round(chars / most * width):{width}} {round(chars)}")
    return "\n".join(rows)
