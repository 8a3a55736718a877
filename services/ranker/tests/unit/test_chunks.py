"""Chunk ranking: bm25s scores against oracles, ordering, one_per_url, bounds."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi
from ranker.analyzer import Analyzer
from ranker.chunks import BM25_B, BM25_K1, ChunksParams, bm25_scores, rank_chunks
from ranker.errors import BoundExceededError
from ranker.model import Page

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
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                norm = BM25_K1 * (1 - BM25_B + BM25_B * length / avg)
                score += idf * tf[term] / (tf[term] + norm)
        out.append(score)
    return out


@pytest.mark.parametrize("query", QUERIES)
def test_scores_match_the_formula_and_rank_bm25(query: str) -> None:
    terms = ANALYZER.query_terms(query)
    ours = bm25_scores(ANALYZER, terms, CORPUS)
    full = [ANALYZER.terms(t) for t in CORPUS]
    lengths = [len(ANALYZER.surface_tokens(t)) for t in CORPUS]
    assert ours == pytest.approx(_direct_bm25(terms, full, lengths), rel=1e-5, abs=1e-6)
    # rank_bm25 takes lengths from its token lists: pad with a token no query contains.
    padded = [d + ["\x00"] * (n - len(d)) for d, n in zip(full, lengths, strict=True)]
    oracle = LuceneIdfOkapi(padded, k1=BM25_K1, b=BM25_B).get_scores(terms) / (BM25_K1 + 1)
    assert np.allclose(ours, oracle, rtol=1e-5, atol=1e-6)
    assert max(ours) > 0


def test_empty_query_and_empty_corpus_score_zero() -> None:
    assert bm25_scores(ANALYZER, [], CORPUS) == [0.0] * len(CORPUS)
    assert bm25_scores(ANALYZER, ["python"], []) == []
    assert bm25_scores(ANALYZER, ["python"], ["", "..."]) == [0.0, 0.0]
    assert bm25_scores(ANALYZER, ["python"], ["the of"]) == [0.0]


def _pages() -> list[Page]:
    return [
        Page("https://a.org/", "A", "\n\n".join(CORPUS[0:3])),
        Page("https://b.org/#top", "B", "\n\n".join(CORPUS[3:6])),
        Page("https://b.org/", "B again", CORPUS[6]),
    ]


def test_best_chunk_first_with_one_per_url() -> None:
    chunks, total = rank_chunks(ANALYZER, "python venv", _pages(), ChunksParams(chunk_words=16))
    assert total == 7
    # b.org/#top and b.org/ are one URL: only its best chunk (from the second page) stays.
    assert [(c.chunk.url, c.chunk.text) for c in chunks] == [
        ("https://a.org/", CORPUS[0]),
        ("https://b.org/", CORPUS[6]),
    ]
    assert chunks[0].score >= chunks[1].score > 0


def test_without_one_per_url_and_top_k() -> None:
    params = ChunksParams(chunk_words=16, one_per_url=False, top_k=3)
    chunks, _ = rank_chunks(ANALYZER, "python venv", _pages(), params)
    assert len(chunks) == 3
    assert [c.score for c in chunks] == sorted((c.score for c in chunks), reverse=True)
    everything, _ = rank_chunks(
        ANALYZER, "python", _pages(), ChunksParams(chunk_words=16, top_k=0, one_per_url=False)
    )
    assert len(everything) == 7


def test_empty_query_returns_chunks_in_page_order() -> None:
    params = ChunksParams(chunk_words=16, one_per_url=False, top_k=0)
    chunks, total = rank_chunks(ANALYZER, "", _pages(), params)
    assert [c.chunk.text for c in chunks] == [t for t in CORPUS[:7] if t]
    assert all(c.score == 0.0 for c in chunks)
    assert total == 7


def test_too_many_chunks_is_a_bound_error() -> None:
    page = Page("https://a.org/", "A", "\n\n".join(["word"] * 50))
    with pytest.raises(BoundExceededError, match="more than 10 chunks"):
        rank_chunks(ANALYZER, "word", [page], ChunksParams(chunk_words=1, max_chunks=10))


WORDS = ["python", "rust", "install", "the", "Ünïcode", "数据", "error.", "fix!", "pip"]
markdown = st.lists(st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join), max_size=5)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), markdown), max_size=6),
    st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join),
    st.integers(0, 6),
)
def test_properties(pages_in: list[tuple[int, list[str]]], query: str, top_k: int) -> None:
    pages = [Page(f"https://h{u}.org/", f"T{u}", "\n\n".join(md)) for u, md in pages_in]
    chunks, total = rank_chunks(ANALYZER, query, pages, ChunksParams(top_k=top_k, chunk_words=16))
    urls = [c.chunk.url for c in chunks]
    assert set(urls) <= {p.url for p in pages}
    assert len(urls) == len(set(urls))  # one_per_url
    assert len(chunks) <= total
    if top_k:
        assert len(chunks) <= top_k
    scores = [c.score for c in chunks]
    assert scores == sorted(scores, reverse=True)
    again, _ = rank_chunks(ANALYZER, query, pages, ChunksParams(top_k=top_k, chunk_words=16))
    assert again == chunks
