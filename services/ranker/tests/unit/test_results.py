"""RankResults end to end in-process: fusion, lexical ranks, properties."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quarry_text.analyzer import Analyzer
from ranker.model import SearchResult
from ranker.results import ResultsParams, rank_results

ANALYZER = Analyzer()


def _r(i: int, title: str = "", snippet: str = "", rank: int | None = None) -> SearchResult:
    return SearchResult(f"https://site{i}.org/", title, snippet, rank if rank else i, ("e",))


def test_lexical_match_is_fused_with_engine_order() -> None:
    results = [
        _r(1, "Cooking pasta", "boil water"),
        _r(2, "Weather today", "sunny"),
        _r(3, "Installing Python on Debian", "apt install python3"),
    ]
    ranked, total = rank_results(ANALYZER, "install python", results)
    assert total == 3
    assert [r.result.url for r in ranked] == [
        "https://site3.org/",
        "https://site1.org/",
        "https://site2.org/",
    ]
    top = ranked[0]
    assert top.lexical_rank == 1
    assert top.rrf_score == pytest.approx(1 / 63 + 1 / 61)
    assert top.bm25f_score > 0
    assert [r.lexical_rank for r in ranked[1:]] == [None, None]
    assert [r.rank for r in ranked] == [1, 2, 3]


def test_stopword_only_matches_get_no_lexical_rank() -> None:
    ranked, _ = rank_results(ANALYZER, "the python", [_r(1, "The weather"), _r(2, "Python")])
    by_url = {r.result.url: r for r in ranked}
    assert by_url["https://site1.org/"].lexical_rank is None
    assert by_url["https://site2.org/"].lexical_rank == 1


def test_empty_query_keeps_engine_order() -> None:
    results = [_r(i, f"title {i}") for i in (3, 1, 2)]
    for query in ("", "   ", "the of", "?!"):
        ranked, _ = rank_results(ANALYZER, query, results)
        assert [r.result.engine_rank for r in ranked] == [1, 2, 3]
        assert all(r.lexical_rank is None and r.bm25f_score == 0.0 for r in ranked)


def test_weights_change_the_lexical_order() -> None:
    results = [_r(1, "rust", "nothing here"), _r(2, "nothing here", "rust rust")]
    title_heavy, _ = rank_results(ANALYZER, "rust", results, ResultsParams(title_weight=5))
    snippet_only, _ = rank_results(
        ANALYZER, "rust", results, ResultsParams(title_weight=0, snippet_weight=1)
    )
    assert title_heavy[0].lexical_rank == 1
    assert title_heavy[0].result.engine_rank == 1
    lexical = {r.result.engine_rank: r.lexical_rank for r in snippet_only}
    assert lexical == {1: None, 2: 1}


def test_duplicates_merge_and_top_k_truncates() -> None:
    results = [
        SearchResult("https://a.org/p#x", "A", engine_rank=1, engines=("g",)),
        SearchResult("https://a.org/p/", "A", engine_rank=2, engines=("b",)),
        SearchResult("https://c.org/", "C", engine_rank=3, engines=("b",)),
    ]
    ranked, total = rank_results(ANALYZER, "a", results, ResultsParams(top_k=1))
    assert total == 2
    assert len(ranked) == 1
    assert ranked[0].result.engines == ("g", "b")


WORDS = ["python", "rust", "install", "guide", "the", "über", "数据", "error", "fix", ""]
texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


@st.composite
def result_lists(draw: st.DrawFn, *, unique_ranks: bool) -> list[SearchResult]:
    n = draw(st.integers(0, 12))
    if unique_ranks:
        ranks = draw(st.permutations(range(1, n + 1)))
    else:
        ranks = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    return [
        SearchResult(
            url=f"https://h{draw(st.integers(0, 15))}.org/",
            title=draw(texts),
            snippet=draw(texts),
            engine_rank=ranks[i],
        )
        for i in range(n)
    ]


@settings(max_examples=60, deadline=None)
@given(result_lists(unique_ranks=True), texts, st.randoms())
def test_permuting_the_input_does_not_change_the_output(
    results: list[SearchResult], query: str, rnd: random.Random
) -> None:
    # Distinct URLs and distinct engine ranks: no ties for input order to break.
    dedup = list({r.url: r for r in results}.values())
    shuffled = list(dedup)
    rnd.shuffle(shuffled)
    a, _ = rank_results(ANALYZER, query, dedup)
    b, _ = rank_results(ANALYZER, query, shuffled)
    assert a == b


@settings(max_examples=60, deadline=None)
@given(result_lists(unique_ranks=False), st.text(max_size=30), st.integers(0, 5))
def test_outputs_come_from_inputs(results: list[SearchResult], query: str, top_k: int) -> None:
    ranked, total = rank_results(ANALYZER, query, results, ResultsParams(top_k=top_k))
    assert {r.result.url for r in ranked} <= {r.url for r in results}
    assert total == len({r.url for r in results})
    assert len(ranked) == (min(top_k, total) if top_k else total)
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    scores = [r.rrf_score for r in ranked]
    assert scores == sorted(scores, reverse=True)
    lexical = sorted(r.lexical_rank for r in ranked if r.lexical_rank is not None)
    if not top_k:
        assert lexical == list(range(1, len(lexical) + 1))
    assert all((r.lexical_rank is None) == (r.bm25f_score == 0.0) for r in ranked)


def test_is_deterministic() -> None:
    results = [_r(i, f"python guide {i % 3}", "install") for i in range(1, 40)]
    first, _ = rank_results(ANALYZER, "python install guide 2", results)
    assert all(
        rank_results(ANALYZER, "python install guide 2", results)[0] == first for _ in range(3)
    )
