"""Hybrid passage search over a snapshot: BM25 and dense rankings fused by RRF; pure.

Every query (the question, its rewrite, gap queries) contributes a BM25 ranking of the
passages and, when vectors are given, a cosine ranking; reciprocal rank fusion (k = 60 by
default, as in SurfSense and the RRF paper) adds them up, so a passage found by several
queries or by both retrievers rises. RRF needs no score calibration between BM25 and
cosine, which live on unrelated scales.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from ranker.analyzer import Analyzer

from index.snapshot import Snapshot, Vectors
from index.types import PassageHit

Floats = npt.NDArray[np.float64]
# Passages each ranking contributes to the fusion: far more than a caller keeps, so a passage
# ranked modestly by two queries can still win.
DEPTH = 100


@dataclass(frozen=True, slots=True)
class PassageParams:
    """Knobs of one search (validated by the caller)."""

    top_k: int = 8
    max_per_document: int = 3  # 0: no limit
    id_prefix: str = ""
    rrf_k: int = 60


def _top(scores: Floats, mask: npt.NDArray[np.bool_] | None, depth: int) -> list[int]:
    """Indices of the ``depth`` highest positive scores (ties: lower index first)."""
    candidates = np.flatnonzero(scores > 0) if mask is None else np.flatnonzero(mask & (scores > 0))
    if len(candidates) > depth:
        part = np.argpartition(-scores[candidates], depth - 1)[:depth]
        candidates = candidates[part]
    order = np.lexsort((candidates, -scores[candidates]))
    ranked: list[int] = candidates[order].tolist()
    return ranked


def _dense_top(
    snap: Snapshot, query: Vectors, mask: npt.NDArray[np.bool_] | None, depth: int
) -> list[int]:
    """The ``depth`` passages closest to ``query`` (cosine: vectors are unit length)."""
    sims = np.asarray(snap.vectors @ query, np.float64)
    # Shift so every passage ranks (cosine may be negative); the mask still applies.
    return _top(sims + 2.0, mask, depth)


def _mask(snap: Snapshot, id_prefix: str) -> npt.NDArray[np.bool_] | None:
    if not id_prefix:
        return None
    docs = np.fromiter((i.id.startswith(id_prefix) for i in snap.infos), np.bool_, len(snap.infos))
    return docs[snap.chunk_doc]


def search_passages(
    analyzer: Analyzer,
    snap: Snapshot,
    queries: Sequence[str],
    query_vectors: Vectors | None,
    params: PassageParams,
) -> list[PassageHit]:
    """The best passages for ``queries``; ``query_vectors`` (one row per query) adds the
    dense rankings (None: BM25 only)."""
    if snap.n_chunks == 0 or params.top_k <= 0:
        return []
    mask = _mask(snap, params.id_prefix)
    fused: dict[int, float] = {}
    lexical: dict[int, int] = {}
    dense: dict[int, int] = {}

    def add(ranking: list[int], best: dict[int, int]) -> None:
        for rank, chunk in enumerate(ranking, 1):
            fused[chunk] = fused.get(chunk, 0.0) + 1.0 / (params.rrf_k + rank)
            best[chunk] = min(best.get(chunk, rank), rank)

    for i, query in enumerate(queries):
        terms = analyzer.query_terms(query)
        ids = [t for t in (snap.term_ids.get(term) for term in terms) if t is not None]
        if ids:
            add(_top(snap.scores(ids), mask, DEPTH), lexical)
        if query_vectors is not None:
            add(_dense_top(snap, query_vectors[i], mask, DEPTH), dense)
    ranked = sorted(fused, key=lambda c: (-fused[c], c))
    return _pick(snap, ranked, fused, lexical, dense, params)


def _pick(
    snap: Snapshot,
    ranked: list[int],
    fused: dict[int, float],
    lexical: dict[int, int],
    dense: dict[int, int],
    params: PassageParams,
) -> list[PassageHit]:
    """The first ``top_k`` of ``ranked``, at most ``max_per_document`` per document."""
    out: list[PassageHit] = []
    per_doc: dict[int, int] = {}
    for chunk in ranked:
        doc = int(snap.chunk_doc[chunk])
        if params.max_per_document and per_doc.get(doc, 0) >= params.max_per_document:
            continue
        per_doc[doc] = per_doc.get(doc, 0) + 1
        info = snap.infos[doc]
        out.append(
            PassageHit(
                document_id=info.id,
                document_title=info.title,
                text=snap.chunk_text.get(chunk),
                index=chunk - int(snap.doc_start[doc]),
                score=fused[chunk],
                lexical_rank=lexical.get(chunk, 0),
                dense_rank=dense.get(chunk, 0),
            )
        )
        if len(out) == params.top_k:
            break
    return out
