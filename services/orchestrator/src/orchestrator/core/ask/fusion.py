"""Reciprocal rank fusion of ordered result lists (pure): one engine order from several sources.

The fusion itself is the text library's (:func:`quarry_text.rrf.fuse_by`, the one RRF the
ranker and the index use too); this module says what identifies a hit and a passage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from quarry_text.rrf import DEFAULT_K, fuse_by

from orchestrator.core.ask.domain import Passage, SearchHit

#: The usual RRF constant (Cormack et al. 2009); the ranker and the index use the same default.
RRF_K = DEFAULT_K


def origin_of(url: str) -> str:
    """The origin of ``url``: "local" for a corpus document id, else "web"."""
    return "local" if url.startswith("local:") else "web"


def rrf(lists: Sequence[Sequence[SearchHit]], k: int = RRF_K) -> list[SearchHit]:
    """Search hits fused by URL (a list's own duplicates count once, at their best rank; ties
    keep the order of first appearance; the hit kept for a URL is its first appearance);
    ``engine_rank`` becomes the 1-based fused position."""
    fused = fuse_by(lists, lambda hit: hit.url, k)
    return [dataclasses.replace(hit, engine_rank=i) for i, hit in enumerate(fused, 1)]


def fuse_passages(lists: Sequence[Sequence[Passage]], k: int = RRF_K) -> list[Passage]:
    """Passages fused by (url, position): the web ranker's and the index's scores are not
    comparable, but their ranks mean the same."""
    return fuse_by(lists, lambda p: (p.url, p.index), k)
