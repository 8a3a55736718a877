"""Reciprocal rank fusion of ordered result lists (pure): one engine order from several sources."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from orchestrator.agent.domain import SearchHit

#: The usual RRF constant (Cormack et al. 2009); the ranker uses the same default.
RRF_K = 60


def origin_of(url: str) -> str:
    """The origin of ``url``: "local" for a corpus document id, else "web"."""
    return "local" if url.startswith("local:") else "web"


def rrf(lists: Sequence[Sequence[SearchHit]], k: int = RRF_K) -> list[SearchHit]:
    """Fuse ordered lists: score(url) = sum over lists of 1 / (k + rank), rank 1-based.

    Ties keep the order of first appearance (earlier list, then earlier position). The hit kept
    for a URL is its first appearance; ``engine_rank`` becomes its 1-based fused position.
    """
    scores: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    for hits in lists:
        seen: set[str] = set()
        for rank, hit in enumerate(hits, start=1):
            if hit.url in seen:  # a list's own duplicates count once, at their best rank
                continue
            seen.add(hit.url)
            scores[hit.url] = scores.get(hit.url, 0.0) + 1.0 / (k + rank)
            first.setdefault(hit.url, hit)
    order = sorted(first, key=lambda url: -scores[url])  # stable: ties keep first appearance
    return [dataclasses.replace(first[url], engine_rank=i) for i, url in enumerate(order, 1)]
