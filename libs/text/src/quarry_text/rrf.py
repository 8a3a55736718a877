"""Reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009); pure.

The one copy: the ranker fuses the engine order with BM25F (RankResults) and BM25 with dense
rankings (RankPassages), the index fuses its BM25 and dense rankings (SearchPassages), the
orchestrator fuses the web's and the index's lists. RRF needs no calibration between scores
on unrelated scales: only ranks count.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Hashable)
V = TypeVar("V")

#: The constant from the paper; it damps the weight of the very top ranks.
DEFAULT_K = 60


def rrf_scores(rankings: Iterable[Sequence[T]], k: int = DEFAULT_K) -> dict[T, float]:
    """Fuse ranked lists: ``score(d) = sum over lists containing d of 1 / (k + rank(d))``.

    Ranks are 1-based positions in each list; a list may omit items (they get nothing from
    it). An item repeated within one list counts at its first position only. The dict is in
    first-seen order (earlier list, then earlier position), which callers use for ties.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    scores: dict[T, float] = {}
    for ranking in rankings:
        seen: set[T] = set()
        for position, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + position)
    return scores


def fuse(rankings: Sequence[Sequence[T]], k: int = DEFAULT_K) -> list[tuple[T, float]]:
    """Items of all lists by descending RRF score; ties keep first-seen order across lists."""
    scores = rrf_scores(rankings, k)
    # dicts keep insertion order and sorted() is stable, so ties stay in first-seen order.
    return sorted(scores.items(), key=lambda kv: -kv[1])


def fuse_by(
    lists: Sequence[Sequence[V]], key: Callable[[V], Hashable], k: int = DEFAULT_K
) -> list[V]:
    """:func:`fuse` for items identified by ``key`` (a URL, a passage's place): the fused
    order of the items, each the first appearance of its key; ties keep first-seen order."""
    first: dict[Hashable, V] = {}
    keyed: list[list[Hashable]] = []
    for items in lists:
        keys = []
        for item in items:
            ident = key(item)
            first.setdefault(ident, item)
            keys.append(ident)
        keyed.append(keys)
    return [first[ident] for ident, _ in fuse(keyed, k)]
