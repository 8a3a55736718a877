"""Chunk ranking: ordering, one_per_url, bounds (BM25 itself: libs/text/tests/unit/test_bm25.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quarry_text.analyzer import Analyzer
from quarry_text.chunking import Page
from ranker.chunks import ChunksParams, rank_chunks
from ranker.errors import BoundExceededError

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
