"""Reciprocal rank fusion of ordered result lists (pure): one engine order from several sources."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from orchestrator.core.ask.domain import Passage, SearchHit

T = TypeVar("T")

#: The usual RRF constant (Cormack et al. 2009); the ranker uses the same default.
RRF_K = 60


def origin_of(url: str) -> str:
    """The origin of ``url``: "local" for a corpus document id, else "web"."""
    return "local" if url.startswith("local:") else "web"


def fuse(lists: Sequence[Sequence[T]], key: Callable[[T], Hashable], k: int = RRF_K) -> list[T]:
    """Fuse ordered lists: score(item) = sum over lists of 1 / (k + rank), rank 1-based, items
    identified by ``key``. Ties keep the order of first appearance (earlier list, then earlier
    position); the item kept for a key is its first appearance."""
    scores: dict[Hashable, float] = {}
    first: dict[Hashable, T] = {}
    for items in lists:
        seen: set[Hashable] = set()
        for rank, item in enumerate(items, start=1):
            ident = key(item)
            if ident in seen:  # a list's own duplicates count once, at their best rank
                continue
            seen.add(ident)
            scores[ident] = scores.get(ident, 0.0) + 1.0 / (k + rank)
            first.setdefault(ident, item)
    order = sorted(first, key=lambda ident: -scores[ident])  # stable: ties keep first appearance
    return [first[ident] for ident in order]


def rrf(lists: Sequence[Sequence[SearchHit]], k: int = RRF_K) -> list[SearchHit]:
    """Search hits fused by URL (see :func:`fuse`); ``engine_rank`` becomes the 1-based fused
    position."""
    fused = fuse(lists, lambda hit: hit.url, k)
    return [dataclasses.replace(hit, engine_rank=i) for i, hit in enumerate(fused, 1)]


def fuse_passages(lists: Sequence[Sequence[Passage]], k: int = RRF_K) -> list[Passage]:
    """Passages fused by (url, position): the web ranker's and the index's scores are not
    comparable, but their ranks mean the same."""
    return fuse(lists, lambda p: (p.url, p.index), k)
