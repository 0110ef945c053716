"""Lesson 13's checks: BM25's top K chunks (13a), and a language server's locations as the
compact tool result the model reads (13b).

The rules are the lesson's, written again here as two small references (``bm25_top`` and
``compact_references``). Nothing here comes from ``labkit.harness.bm25``,
``labkit.harness.retrieval`` or ``labkit.harness.symbol_places``, the code the lesson
teaches.
"""

from __future__ import annotations

import math
import random
from urllib.parse import quote, unquote

from ..feedback import Case, run_cases, show
from ..isolated import same
from .common import hidden_cases, learner_answer, with_drawn

__all__ = ["check_rank_chunks", "check_references_to_result"]

K1, B = 1.5, 0.75


# --- 13a: rank_chunks -----------------------------------------------------------------------


def bm25_scores(query: list, chunks: list, mistake: str = "") -> list:
    """The reference's scores (``mistake`` empty), or those of a known mistake, to name it:
    ``raw_tf`` (idf times the count, no length normalisation), ``classic_idf`` (the idf
    that goes below zero), ``repeated_terms`` (a repeated query term counted again),
    ``average_nonempty`` (the average length over the chunks that are not empty)."""
    n = len(chunks)
    average = sum(len(chunk) for chunk in chunks) / n if n else 0.0
    if mistake == "average_nonempty":
        lengths = [len(chunk) for chunk in chunks if chunk]
        average = sum(lengths) / len(lengths) if lengths else 0.0
    terms = query if mistake == "repeated_terms" else list(dict.fromkeys(query))
    scores = []
    for chunk in chunks:
        score = 0.0
        for term in terms:
            tf = chunk.count(term)
            if tf and average:
                holding = sum(1 for other in chunks if term in other)
                if mistake == "classic_idf":
                    idf = math.log((n - holding + 0.5) / (holding + 0.5))
                else:
                    idf = math.log(1 + (n - holding + 0.5) / (holding + 0.5))
                if mistake == "raw_tf":
                    score += idf * tf
                else:
                    norm = K1 * (1 - B + B * len(chunk) / average)
                    score += idf * tf * (K1 + 1) / (tf + norm)
        scores.append(score)
    return scores


def bm25_top(query: list, chunks: list, k: int, mistake: str = "") -> list:
    """The reference: the indices of the best ``k`` chunks scoring above zero, best first,
    equal scores in index order. Lucene's idf; each distinct query term counted once.
    ``mistake`` (to name one): a scoring mistake of ``bm25_scores``, or ``ascending``,
    ``ties_reversed``, ``zeros_kept``."""
    scores = bm25_scores(query, chunks, mistake)
    n = len(chunks)
    if mistake == "ascending":
        order = sorted(range(n), key=lambda i: (scores[i], i))
    elif mistake == "ties_reversed":
        order = sorted(range(n), key=lambda i: (scores[i], i), reverse=True)
    else:
        order = sorted(range(n), key=lambda i: (-scores[i], i))
    return [i for i in order if scores[i] > 0 or mistake == "zeros_kept"][:k]


LONG = ["date"] * 2 + ["filler"] * 38
#: (what the case shows, query terms, chunks, k, a hint)
RANK_CASES = [
    (
        "one term, three chunks",
        ["date"],
        [["parse", "date"], ["round", "cents"], ["format", "date", "date"]],
        3,
        "",
    ),
    (
        "a short chunk against a long one that says it twice",
        ["date"],
        [LONG, ["date", "parse"], ["cents"]],
        2,
        "BM25 divides by the chunk's length against the average: a short function that names "
        "the term beats a long file that mentions it in passing",
    ),
    (
        "k is smaller than the matches",
        ["date", "parse"],
        [["parse", "date"], ["date"], ["parse"], ["parse", "date", "date"]],
        2,
        "return at most k indices, the best first",
    ),
    (
        "ties: three chunks alike",
        ["cents"],
        [["money"], ["round", "cents"], ["round", "cents"], ["cents"], ["cents", "round"]],
        4,
        "equal scores come in index order: the earlier chunk first",
    ),
    (
        "no chunk holds the term",
        ["zebra"],
        [["parse", "date"], ["cents"]],
        5,
        "a chunk that scores 0 is not returned",
    ),
    (
        "the query repeats a term",
        ["date", "date", "cents"],
        [["date", "x1", "x2"], ["cents", "cents", "x2"], ["other", "x1", "x2"]],
        3,
        "each distinct query term counts once: a repeated word in the query adds nothing",
    ),
    (
        "a term in most chunks",
        ["ledger", "between"],
        [["ledger", "between"], ["ledger", "a1"], ["ledger", "a2"], ["ledger", "a3"], ["b"]],
        5,
        "Lucene's idf, ln(1 + (N - n + 0.5) / (n + 0.5)), is never negative: a term in most "
        "chunks still adds a little",
    ),
]
VOCABULARY = ("date", "parse", "cents", "round", "ledger", "between", "self", "test", "é")


def drawn_ranking(draw: random.Random) -> tuple[list, list, int]:
    """A query, chunks and k; drawn again while two different chunks score within 1e-9 of
    each other: whether such scores tie depends on the order the sum is taken in."""
    while True:
        words = VOCABULARY[: draw.randint(3, len(VOCABULARY))]
        chunks = [
            [draw.choice(words) for _ in range(draw.randint(0, 9))]
            for _ in range(draw.randint(1, 9))
        ]
        query = [draw.choice(words) for _ in range(draw.randint(1, 4))]
        scores = bm25_scores(query, chunks)
        if not any(
            0 < scores[i] and chunks[i] != chunks[j] and math.isclose(scores[i], scores[j])
            for i in range(len(chunks))
            for j in range(i)
        ):
            return query, chunks, draw.randint(1, 6)


def check_rank_chunks(rank_chunks, *, hidden: bool = False) -> None:
    """``rank_chunks(query_terms, chunks, k)``: BM25's best ``k`` chunk indices."""
    answer = learner_answer(rank_chunks, "rank_chunks")
    hidden_rank = hidden_cases("check_rank_chunks") if hidden else []
    fixed = [(label, (query, chunks, k), hint) for label, query, chunks, k, hint in RANK_CASES]
    more = [(label, (query, chunks, k), hint) for label, query, chunks, k, hint in hidden_rank]
    tried, _ = with_drawn(fixed, more, drawn_ranking)
    cases = [Case(label, list(given), bm25_top(*given), hint=hint) for label, given, hint in tried]
    run_cases(answer, cases, _rank_problem, what="rank_chunks")


def _rank_problem(got, case, outcome) -> str | None:
    if type(got) is not list or not all(type(i) is int for i in got):
        return f"return a list of chunk indices (ints), not {show(got, 60)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    if not same(outcome.arguments, case.arguments):
        return "your function changed the terms or chunks it was given: only read them"
    expected = case.expected
    if got == expected:
        return None
    query, chunks, k = case.arguments
    if len(got) > k:
        return f"you returned {len(got)} indices; at most k = {k}"
    for mistake, text in RANK_MISTAKES:
        if got == bm25_top(query, chunks, k, mistake):
            return text
    if sorted(got) == sorted(expected):
        return "the right chunks in the wrong order: best first, equal scores in index order"
    return "these are not the chunks with the highest BM25 scores"


#: Known mistakes, in the order they are looked for, and how each is named.
RANK_MISTAKES = [
    (
        "raw_tf",
        "these are the chunks with the most occurrences, not BM25's: the count must saturate "
        "(K1) and be divided by the chunk's length against the average (B)",
    ),
    (
        "classic_idf",
        "a common term lowered the score: the lesson's idf, ln(1 + (N - n + 0.5) / (n + 0.5)), "
        "is never negative",
    ),
    ("repeated_terms", "a term repeated in the query counted again: count each distinct term once"),
    (
        "average_nonempty",
        "the average length must be over every chunk, the empty ones too (N counts them)",
    ),
    ("zeros_kept", "a chunk that scores 0 (it holds no query term) is not returned"),
    ("ties_reversed", "equal scores must come in index order (the earlier chunk first)"),
    ("ascending", "the order is reversed: the best chunk (the highest score) comes first"),
]


# --- 13b: references_to_result ----------------------------------------------------------------


def workspace_path(uri, root: str) -> str | None:
    """The reference: the path of ``uri`` relative to ``root``, or None outside it."""
    prefix = "file://"
    if not isinstance(uri, str) or not uri.startswith(prefix):
        return None
    path = unquote(uri[len(prefix) :])
    parts, root_parts = path.split("/"), root.rstrip("/").split("/")
    inside = parts[len(root_parts) :]
    if parts[: len(root_parts)] != root_parts or not inside or not all(inside) or ".." in parts:
        return None
    return "/".join(inside)


def compact_references(locations: list, root: str, cap: int) -> dict:
    """The reference: ``{"count", "places", "more"?, "outside"?}``, as the lesson says."""
    found, outside = [], 0
    for location in locations:
        path = workspace_path(location["uri"], root)
        if path is None:
            outside += 1
            continue
        start = location["range"]["start"]
        found.append((path, start["line"] + 1, start["character"]))
    found.sort()
    result = {"count": len(found), "places": [{"path": p, "line": n} for p, n, _ in found[:cap]]}
    if len(found) > cap:
        result["more"] = f"and {len(found) - cap} more"
    if outside:
        result["outside"] = outside
    return result


ROOT = "/tmp/labkit-x1/sample_project"


def at(path: str, line: int, character: int = 4, root: str = ROOT) -> dict:
    """A ``Location`` as a server sends it: a URI and a 0-based range."""
    start = {"line": line, "character": character}
    end = {"line": line, "character": character + 7}
    return {"uri": "file://" + quote(f"{root}/{path}"), "range": {"start": start, "end": end}}


REFERENCES = [
    at("ledger/reports.py", 24, 27),
    at("ledger/models.py", 97),
    at("ledger/budget.py", 50, 18),
]
#: (what the case shows, locations, cap, a hint)
REFERENCE_CASES = [
    (
        "three references in three files",
        REFERENCES,
        20,
        "a server's lines start at 0, an editor's (and grep's) at 1",
    ),
    ("one reference", [at("ledger/dates.py", 21)], 5, "lines from 1: add one"),
    (
        "in server order: sort by path, then line",
        [at("b.py", 9), at("a.py", 40), at("a.py", 4), at("c.py", 0)],
        10,
        "sort by path, then by line (as numbers): the same question, the same answer",
    ),
    (
        "more than the cap",
        [at(f"ledger/m{n}.py", n) for n in range(7)],
        3,
        "list cap places, then 'more': 'and N more' with N the places left out",
    ),
    (
        "exactly the cap",
        [at("a.py", 1), at("a.py", 2)],
        2,
        "'more' only when places were left out",
    ),
    (
        "a stub outside the workspace",
        [*REFERENCES[:2], at("typing.pyi", 10, root="/usr/lib/python3.11")],
        20,
        "a path outside the workspace never reaches the model: leave it out and count it "
        "under 'outside'",
    ),
    (
        "a folder whose name starts like the workspace's",
        [at("ledger/models.py", 97), at("ledger/models.py", 3, root=ROOT + "2")],
        20,
        "compare the path part by part: /tmp/x/sample_project2 is not inside /tmp/x/sample_project",
    ),
    ("no reference", [], 5, ""),
]
FILES = ("ledger/models.py", "ledger/budget.py", "tests/test_ledger.py", "a.py", "é/b.py")


def drawn_locations(draw: random.Random) -> tuple[list, int]:
    locations = []
    for _ in range(draw.randint(0, 12)):
        root = draw.choice([ROOT] * 5 + [ROOT + "2", "/usr/lib/python3"])
        locations.append(at(draw.choice(FILES), draw.randint(0, 12), draw.randint(0, 9), root))
    return locations, draw.randint(0, 8)


def check_references_to_result(references_to_result, *, hidden: bool = False) -> None:
    """``references_to_result(locations, root, cap)``: the compact tool result."""
    answer = learner_answer(references_to_result, "references_to_result")
    hidden_found = hidden_cases("check_references_to_result") if hidden else []
    fixed = [(label, (locations, cap), hint) for label, locations, cap, hint in REFERENCE_CASES]
    more = [(label, (locations, cap), hint) for label, locations, cap, hint in hidden_found]
    tried, _ = with_drawn(fixed, more, drawn_locations)
    cases = [
        Case(
            label,
            [locations, ROOT, cap],
            compact_references(locations, ROOT, cap),
            hint=hint,
            shown=f"{answer.name}({show(locations, 400)}, {ROOT!r}, {cap})",
        )
        for label, (locations, cap), hint in tried
    ]
    run_cases(answer, cases, _reference_problem, what="references_to_result")


def _reference_problem(got, case, outcome) -> str | None:
    if type(got) is not dict:
        return f"return a dict with 'count' and 'places', not {show(got, 60)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    if not same(outcome.arguments, case.arguments):
        return "your function changed the locations it was given: only read them"
    expected = case.expected
    if same(got, expected):
        return None
    listed = got.get("places") if isinstance(got.get("places"), list) else []
    if any(
        str(place.get("path", "")).startswith(("/", "file:"))
        for place in listed
        if isinstance(place, dict)
    ):
        return "an absolute path reached the result: places are paths relative to the workspace"
    if any("%" in str(place.get("path", "")) for place in listed if isinstance(place, dict)):
        return "a path still holds %-escapes: decode the URI (%20 is a space, %C3%A9 an é)"
    places, wanted = got.get("places"), expected["places"]
    if isinstance(places, list) and all(isinstance(p, dict) for p in places):
        lines = [(p.get("path"), p.get("line")) for p in places]
        if lines == [(p["path"], p["line"] - 1) for p in wanted]:
            return "every line is one too low: the server counts from 0, the result from 1"
        if lines == [(p["path"], p["line"] + 1) for p in wanted]:
            return "every line is one too high: add one to the server's line, once"
        if sorted(map(str, lines)) == sorted(str((p["path"], p["line"])) for p in wanted):
            if lines != [(p["path"], p["line"]) for p in wanted]:
                return "the right places in the wrong order: sort by path, then by line"
    if got.get("count") != expected["count"]:
        return (
            f"'count' is {show(got.get('count'), 40)}; it counts the places inside the "
            f"workspace: {expected['count']}"
        )
    if got.get("more") != expected.get("more"):
        return f"'more' is {show(got.get('more'), 40)}, expected {show(expected.get('more'), 40)}"
    if got.get("outside") != expected.get("outside"):
        return (
            f"'outside' is {show(got.get('outside'), 40)}, expected "
            f"{show(expected.get('outside'), 40)} (the locations left out, absent when none)"
        )
    return "the places differ from the lesson's rules"
