"""Lesson 13's runs: a recording keeps the sample it copied and the retrieval it ran with,
a replay sets both up again, and a setting that cannot be set up is refused by name."""

import pytest

from labkit.extensions.embeddings import MiniLMRetriever
from labkit.harness.retrieval import BM25Retriever
from labkit.recording.harness_setup import (
    harness_setup,
    make_retriever,
    replay_harness,
    setup_problem,
)

RETRIEVAL = {"retriever": "bm25", "k": 4}


def test_the_sample_and_the_retrieval_are_kept_and_set_up_again():
    setup = harness_setup("symbols", sample="sample_project", retrieval=RETRIEVAL)
    assert setup == {"sample": "sample_project", "tools": "symbols", "retrieval": RETRIEVAL}
    assert setup_problem(setup) is None
    assert replay_harness({"harness": setup, "events": []}) == {
        "tools": "symbols",
        "sample": "sample_project",
        "retrieval": RETRIEVAL,
    }
    assert harness_setup() == {}  # the course's plain repair keeps nothing


@pytest.mark.parametrize(
    "setup, words",
    [
        ({"sample": "elsewhere"}, "'harness.sample' is 'elsewhere'"),
        ({"retrieval": {"retriever": "tfidf", "k": 4}}, "one of bm25, minilm"),
        ({"retrieval": {"retriever": "bm25", "k": 0}}, "'k': 1 to 20"),
        ({"retrieval": {"retriever": "bm25", "k": True}}, "'k': 1 to 20"),
        ({"retrieval": {"retriever": "bm25"}}, "'harness.retrieval'"),
    ],
)
def test_a_setting_that_cannot_be_set_up_is_named(setup, words):
    assert words in setup_problem(setup)


def test_retrievers_by_name():
    assert isinstance(make_retriever("bm25"), BM25Retriever)
    assert isinstance(make_retriever("minilm"), MiniLMRetriever)
    with pytest.raises(ValueError, match="one of bm25, minilm, not 'tfidf'"):
        make_retriever("tfidf")
    with pytest.raises(ValueError, match="sample is one of"):
        harness_setup(sample="elsewhere")
