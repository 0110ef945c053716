"""BM25: Lucene's idf, length normalisation, saturation, ties in index order."""

import math

import pytest

from labkit.harness.bm25 import BM25, terms


def test_terms_split_code_names_and_drop_one_letter_words():
    assert terms("parse_date parseDate HTTPServer x = 42") == [
        "parse", "date", "parse", "date", "http", "server", "42",
    ]  # fmt: skip
    assert terms("") == []


def test_one_chunk_scored_by_hand():
    # 2 chunks, average length 2.5; "date" is in 1 of 2: idf = ln(1 + 1.5 / 1.5) = ln 2
    index = BM25([["parse", "date", "date"], ["money", "cents"]])
    tf, length, average = 2, 3, 2.5
    norm = 1.5 * (1 - 0.75 + 0.75 * length / average)
    expected = math.log(2) * tf * 2.5 / (tf + norm)
    assert index.scores(["date"]) == [pytest.approx(expected), 0.0]


def test_a_term_in_every_chunk_still_counts_a_little():
    index = BM25([["a1", "common"], ["b1", "common"], ["c1", "common"]])
    scores = index.scores(["common"])
    assert all(score > 0 for score in scores) and len(set(scores)) == 1
    assert scores[0] == pytest.approx(math.log(1 + 0.5 / 3.5) * 2.5 / (1 + 1.5))


def test_a_short_chunk_beats_a_long_one_with_the_same_count():
    index = BM25([["date"] + ["filler"] * 20, ["date", "word"]])
    long, short = index.scores(["date"])
    assert short > long > 0


def test_repeating_a_term_saturates():
    index = BM25([["date"] * 1 + ["x1"] * 9, ["date"] * 10, ["other"] * 10])
    once, ten, _ = index.scores(["date"])
    assert once < ten < once * 10 / 2


def test_top_keeps_positive_scores_best_first_ties_in_index_order():
    index = BM25([["money"], ["date"], ["date"], [], ["date", "date"]])
    assert index.top(["date"], 10) == [4, 1, 2]
    assert index.top(["date"], 2) == [4, 1]
    assert index.top(["unknown"], 3) == []
    assert index.top(["date", "date"], 10) == [4, 1, 2]  # a query's repeated term counts once


def test_an_empty_index_and_an_empty_query():
    assert BM25([]).scores(["date"]) == []
    assert BM25([[], []]).scores(["date"]) == [0.0, 0.0]
    assert BM25([["date"]]).scores([]) == [0.0]


def test_the_harness_and_exercise_13a_s_reference_agree_on_drawn_cases():
    import random

    from labkit.grading.checks.lesson13_finding_code import bm25_top, drawn_ranking

    draw = random.Random(13)
    for _ in range(300):
        query, chunks, k = drawn_ranking(draw)
        assert BM25(chunks).top(query, k) == bm25_top(query, chunks, k)
