"""Lesson 13's questions: their answers are right on the sample, and each method's outcome is
scored by hand-checkable rules (precision, recall, found)."""

from labkit.harness.project import PROJECT
from labkit.lessons.finding import QUESTIONS, Outcome, Rounded, methods_table, question


def test_fourteen_questions_of_the_four_kinds_each_answer_file_exists_and_names_its_symbol():
    assert len(QUESTIONS) == 14
    assert {q.kind for q in QUESTIONS} == {"where", "who calls", "which test", "what breaks"}
    for q in QUESTIONS:
        for path in q.answer:
            assert (PROJECT.folder / path).is_file(), (q.text, path)
        if q.symbols is not None:
            symbol = q.symbols[1]["symbol"]
            texts = [(PROJECT.folder / path).read_text() for path in q.answer]
            assert any(symbol in text for text in texts), q.text


def test_precision_recall_and_found_by_hand():
    q = question("Who calls x?", "who calls", {"a.py", "b.py"}, {"pattern": "x"})
    half = Outcome("grep", q, frozenset({"a.py", "c.py", "d.py", "e.py"}), 1, 10)
    assert (half.precision, half.recall, half.found) == (0.25, 0.5, False)
    whole = Outcome("symbols", q, frozenset({"a.py", "b.py"}), 1, 30)
    assert (whole.precision, whole.recall, whole.found) == (1.0, 1.0, True)
    nothing = Outcome("bm25 K=3", q, frozenset(), 0, 0)
    assert (nothing.precision, nothing.recall, nothing.found) == (0.0, 0.0, False)
    table = methods_table([half, whole]).splitlines()
    assert table[1].split() == ["grep", "0", "/", "1", "0.25", "0.50", "1.0", "10"]
    assert table[2].split() == ["symbols", "1", "/", "1", "1.00", "1.00", "1.0", "30"]


def test_rounded_scores_keep_the_retrievers_name_and_round_to_four_places():
    class Fixed:
        name = "fixed"

        def index(self, texts):
            self.texts = texts

        def scores(self, query):
            return [0.123456, 0.12344]

    rounded = Rounded(Fixed())
    rounded.index(["a", "b"])
    assert rounded.name == "fixed" and rounded.scores("q") == [0.1235, 0.1234]
