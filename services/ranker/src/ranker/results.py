"""RankResults: de-duplicate, score with BM25F, fuse with the engine order by RRF; pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quarry_text.analyzer import Analyzer
from quarry_text.bm25f import bm25f_scores
from quarry_text.rrf import DEFAULT_K, rrf_scores

from ranker.model import RankedResult, SearchResult
from ranker.urls import merge_duplicates


@dataclass(frozen=True)
class ResultsParams:
    """Knobs of one RankResults call (defaults from the contract)."""

    title_weight: float = 2.0
    snippet_weight: float = 1.0
    rrf_k: int = DEFAULT_K
    top_k: int = 0  # 0 means all


def rank_results(
    analyzer: Analyzer,
    query: str,
    results: Sequence[SearchResult],
    params: ResultsParams | None = None,
) -> tuple[list[RankedResult], int]:
    """Return the fused ranking (truncated to ``top_k``) and the number of distinct results.

    Two lists are fused: the engine order (after merging duplicate URLs) and the BM25F
    order of the results matching at least one query term; non-matching results are off
    the lexical list. A query with no terms leaves the engine order as it is. Ties in
    either order, and in the fused score, keep the engine order.
    """
    p = params or ResultsParams()
    merged = merge_duplicates(results)
    terms = analyzer.query_terms(query)
    docs = [(analyzer.terms(r.title), analyzer.terms(r.snippet)) for r in merged]
    scores = bm25f_scores(terms, docs, (p.title_weight, p.snippet_weight))
    engine_list = list(range(len(merged)))
    # sorted() is stable, so equal scores stay in engine order.
    lexical_list = sorted((i for i in engine_list if scores[i] > 0.0), key=lambda i: -scores[i])
    lexical_rank = {i: pos for pos, i in enumerate(lexical_list, start=1)}
    fused = rrf_scores((engine_list, lexical_list), p.rrf_k)
    order = sorted(engine_list, key=lambda i: -fused[i])
    if p.top_k:
        order = order[: p.top_k]
    ranked = [
        RankedResult(
            result=merged[i],
            bm25f_score=scores[i],
            lexical_rank=lexical_rank.get(i),
            rrf_score=fused[i],
            rank=pos,
        )
        for pos, i in enumerate(order, start=1)
    ]
    return ranked, len(merged)
