"""Reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009); pure."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

#: The constant from the paper; it damps the weight of the very top ranks.
DEFAULT_K = 60


def rrf_scores(rankings: Iterable[Sequence[T]], k: int = DEFAULT_K) -> dict[T, float]:
    """Fuse ranked lists: ``score(d) = sum over lists containing d of 1 / (k + rank(d))``.

    Ranks are 1-based positions in each list; a list may omit items (they get nothing from
    it). An item repeated within one list counts at its first position only.
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
