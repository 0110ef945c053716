"""BM25, the lexical retriever: which chunks share the query's rarer words, and how often.

Okapi BM25 scores a chunk for a query by adding, for each distinct query term the chunk
holds, the term's rarity times a saturating count of it, normalised by the chunk's length:

    score(chunk) = sum over distinct query terms t found in the chunk of
        idf(t) * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average_length))

    idf(t) = ln(1 + (N - n + 0.5) / (n + 0.5))

where ``tf`` is how often ``t`` occurs in the chunk, ``length`` the chunk's number of terms,
``average_length`` that of all chunks, ``N`` the number of chunks and ``n`` how many hold
``t``. This idf is Lucene's: never negative, so a term found in every chunk still counts
a little (the classic ``ln((N - n + 0.5) / (n + 0.5))`` goes below zero past half the
chunks). ``K1`` caps what repeating a term is worth; ``B`` how much a long chunk is
discounted, so a short function that names the term wins over a long file that mentions
it in passing.

``top`` returns the best ``k`` chunks that score above zero, best first; chunks of equal
score come in their order in the index (an earlier chunk first), so the same query gets the
same answer on every machine. Exercise 13a writes ``rank_chunks`` by these rules.

``terms`` cuts code and prose alike into lower-case words: ``parse_date``, ``parseDate``
and ``parse date`` all give ``parse``, ``date``; numbers stay, one-letter words go.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

K1 = 1.5
B = 0.75
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def terms(text: str) -> list[str]:
    """The words of ``text``, lower-case: snake_case, camelCase and dotted names split."""
    return [word.lower() for word in _WORD.findall(text) if len(word) > 1]


class BM25:
    """An index of chunks, each a list of terms; ``scores`` and ``top`` for a query."""

    def __init__(self, chunks: Sequence[Sequence[str]], k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self.counts = [Counter(chunk) for chunk in chunks]
        self.lengths = [len(chunk) for chunk in chunks]
        total = sum(self.lengths)
        self.average = total / len(chunks) if chunks else 0.0
        holding = Counter(term for counts in self.counts for term in counts)
        n = len(chunks)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in holding.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        """Each chunk's score for the query's distinct terms (0.0 for one holding none)."""
        wanted = [term for term in dict.fromkeys(query) if term in self.idf]
        found = []
        for counts, length in zip(self.counts, self.lengths):
            score = 0.0
            if wanted and self.average:
                norm = self.k1 * (1 - self.b + self.b * length / self.average)
                for term in wanted:
                    tf = counts[term]
                    if tf:
                        score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            found.append(score)
        return found

    def top(self, query: Sequence[str], k: int) -> list[int]:
        """The indices of the best ``k`` chunks scoring above zero, best first, ties in index
        order."""
        scores = self.scores(query)
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [i for i in ranked if scores[i] > 0][:k]
