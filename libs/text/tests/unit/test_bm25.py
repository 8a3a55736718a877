"""BM25: bm25s over term counts, and the postings path (idf, term_scores), against the formula
written out and rank_bm25 (a second, independent implementation)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from quarry_text.analyzer import Analyzer
from quarry_text.bm25 import BM25_B, BM25_K1, bm25_scores, idf, term_scores
from quarry_text.termcounts import term_frequencies
from rank_bm25 import BM25Okapi

ANALYZER = Analyzer()

CORPUS = [
    "Installing Python on Debian: apt install python3 python3-venv, then create a venv.",
    "The Rust book explains ownership, borrowing and lifetimes with many examples.",
    "To install packages into a virtual environment, activate it and run pip install.",
    "Debian stable ships Python 3.11; newer versions come from backports or pyenv.",
    "Lifetimes in Rust are checked by the borrow checker at compile time.",
    "Cooking pasta: boil salted water, add the pasta, stir, and drain after ten minutes.",
    "Python's venv module creates lightweight virtual environments with their own pip.",
    "",
    "Über Python — installing a venv on Debian, the “lightweight” way.",  # the token path
]
QUERIES = ["install python on debian", "rust lifetimes borrow checker", "virtual environments pip"]


class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]  # rank_bm25 is untyped
    """rank_bm25's Okapi BM25 with Lucene's idf, which bm25s uses; tf part times (k1 + 1)."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, df in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5))


def _direct_bm25(query: list[str], docs: list[list[str]], lengths: list[int]) -> list[float]:
    """The Lucene BM25 formula written out (the oracle for bm25s's scores); ``docs`` are
    analysed terms, ``lengths`` count every token (stop-words too)."""
    n = len(docs)
    avg = sum(lengths) / n
    out = []
    for doc, length in zip(docs, lengths, strict=True):
        tf = Counter(doc)
        score = 0.0
        for term in query:
            df = sum(term in d for d in docs)
            if tf[term]:
                term_idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                norm = BM25_K1 * (1 - BM25_B + BM25_B * length / avg)
                score += term_idf * tf[term] / (tf[term] + norm)
        out.append(score)
    return out


def _analysed() -> tuple[list[list[str]], list[int]]:
    return [ANALYZER.terms(t) for t in CORPUS], [len(ANALYZER.surface_tokens(t)) for t in CORPUS]


@pytest.mark.parametrize("query", QUERIES)
def test_scores_match_the_formula_and_rank_bm25(query: str) -> None:
    terms = ANALYZER.query_terms(query)
    ours = bm25_scores(ANALYZER, terms, CORPUS)
    full, lengths = _analysed()
    assert ours == pytest.approx(_direct_bm25(terms, full, lengths), rel=1e-5, abs=1e-6)
    # rank_bm25 takes lengths from its token lists: pad with a token no query contains.
    padded = [d + ["\x00"] * (n - len(d)) for d, n in zip(full, lengths, strict=True)]
    oracle = LuceneIdfOkapi(padded, k1=BM25_K1, b=BM25_B).get_scores(terms) / (BM25_K1 + 1)
    assert np.allclose(ours, oracle, rtol=1e-5, atol=1e-6)
    assert max(ours) > 0


@pytest.mark.parametrize("query", QUERIES)
def test_the_postings_path_scores_as_bm25s_does(query: str) -> None:
    # The index's way: per-text term frequencies, then idf and term_scores per query term.
    terms = ANALYZER.query_terms(query)
    rows = [term_frequencies(ANALYZER, t) for t in CORPUS]
    lengths = np.array([n for _, n in rows])
    avg = float(lengths.mean())
    mine = np.zeros(len(CORPUS))
    for term in terms:
        holders = np.array([i for i, (counts, _) in enumerate(rows) if term in counts], int)
        if not len(holders):
            continue
        tf = np.array([rows[i][0][term] for i in holders], np.float64)
        mine[holders] += term_scores(idf(len(holders), len(CORPUS)), tf, lengths[holders], avg)
    assert list(mine) == pytest.approx(bm25_scores(ANALYZER, terms, CORPUS), rel=1e-5, abs=1e-6)
    full, counted = _analysed()
    assert list(lengths) == counted
    assert list(mine) == pytest.approx(_direct_bm25(terms, full, counted), rel=1e-9, abs=1e-12)


def test_term_frequencies_count_what_the_analyser_makes() -> None:
    for text in CORPUS:
        counts, length = term_frequencies(ANALYZER, text)
        assert counts == dict(Counter(ANALYZER.terms(text)))
        assert length == len(ANALYZER.surface_tokens(text))


def test_idf_is_lucenes_and_always_positive() -> None:
    assert idf(1, 1) == pytest.approx(math.log(1 + 0.5 / 1.5))
    assert idf(10, 10) > 0
    assert idf(0, 10) > idf(1, 10) > idf(10, 10)


def test_empty_query_and_empty_corpus_score_zero() -> None:
    assert bm25_scores(ANALYZER, [], CORPUS) == [0.0] * len(CORPUS)
    assert bm25_scores(ANALYZER, ["python"], []) == []
    assert bm25_scores(ANALYZER, ["python"], ["", "..."]) == [0.0, 0.0]
    assert bm25_scores(ANALYZER, ["python"], ["the of"]) == [0.0]
