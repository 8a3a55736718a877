"""Hybrid passage search over a snapshot: BM25 and dense rankings fused by RRF; pure.

Every query (the question, its rewrite, gap queries) contributes a BM25 ranking of the
passages and, when vectors are given, a cosine ranking; reciprocal rank fusion (k = 60 by
default, as in SurfSense and the RRF paper) adds them up, so a passage found by several
queries or by both retrievers rises. RRF needs no score calibration between BM25 and
cosine, which live on unrelated scales.

RRF ranks every passage that shares a word with the query, so a floor keeps the local
documents out of answers they have nothing to say to (issue 23 item 4): an off-topic question
then falls through to the web or to the labelled model-only answer. A passage counts only
when its cosine to the query reaches ``min_cosine`` or its BM25, as a share of the most the
query's subject terms could score (each term's idf; a word the index lacks counts too; the
question words "what", "how", "does" … are left out, quarry_text.analyzer.QUESTION_WORDS), reaches
``strong_bm25``; without vectors, when that share reaches ``min_bm25``. The floors were
chosen on Quarry's own docs (README + docs/, 202 passages) with 20 on-topic and 20
off-topic questions (services/index/tests/integration/test_floor.py): on-topic best cosine
0.29-0.76; off-topic 0.12-0.22 (two about SQLite and Git, which the README names:
0.35-0.38). BM25 shares of the question's subject terms: on-topic 0.27-0.72, off-topic
0.00-0.21 (counting the question words too, as before 2026-11-27, they were 0.20-0.56 and
0.05-0.21: "what" and "how" dragged every share down, and a one-note corpus asked "What is
…?" fell under the floor).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from quarry_text.analyzer import Analyzer
from quarry_text.bm25 import idf
from quarry_text.rrf import rrf_scores

from index.snapshot import Snapshot, Vectors
from index.types import PassageHit

Floats = npt.NDArray[np.float64]
# Passages each ranking contributes to the fusion: far more than a caller keeps, so a passage
# ranked modestly by two queries can still win.
DEPTH = 100
# The relevance floors (see the module doc for the data they come from).
MIN_COSINE = 0.25
MIN_BM25 = 0.23
STRONG_BM25 = 0.35


@dataclass(frozen=True, slots=True)
class PassageParams:
    """Knobs of one search (validated by the caller)."""

    top_k: int = 8
    max_per_document: int = 3  # 0: no limit
    id_prefix: str = ""
    rrf_k: int = 60
    # Also only ids starting with one of these (empty: no such bound).
    id_prefixes: tuple[str, ...] = ()
    min_cosine: float = MIN_COSINE
    min_bm25: float = MIN_BM25
    strong_bm25: float = STRONG_BM25


def _top(scores: Floats, mask: npt.NDArray[np.bool_] | None, depth: int) -> list[int]:
    """Indices of the ``depth`` highest positive scores (ties: lower index first)."""
    candidates = np.flatnonzero(scores > 0) if mask is None else np.flatnonzero(mask & (scores > 0))
    if len(candidates) > depth:
        part = np.argpartition(-scores[candidates], depth - 1)[:depth]
        candidates = candidates[part]
    order = np.lexsort((candidates, -scores[candidates]))
    ranked: list[int] = candidates[order].tolist()
    return ranked


def _cosines(snap: Snapshot, query: Vectors) -> Floats:
    """Each passage's cosine to ``query`` (unit vectors; 0 for a passage not embedded yet)."""
    return np.asarray(snap.vectors @ query, np.float64)


def _most(snap: Snapshot, terms: Sequence[str]) -> float:
    """The most a passage could score for ``terms`` (every idf at full weight), counting a
    term the index lacks at the idf of a term no passage holds."""
    n = snap.n_chunks
    total = 0.0
    for term in terms:
        t = snap.term_ids.get(term)
        df = 0 if t is None else int(snap.term_ptr[t + 1] - snap.term_ptr[t])
        total += idf(df, n)
    return total or 1.0


def _ids(snap: Snapshot, terms: Sequence[str]) -> list[int]:
    return [t for t in (snap.term_ids.get(term) for term in terms) if t is not None]


def _share(
    analyzer: Analyzer, snap: Snapshot, query: str, terms: Sequence[str], bm25: Floats
) -> Floats:
    """Each passage's BM25 for the question's subject terms (question words left out: "what",
    "how", "does" say nothing of the subject, and a corpus without "what" is no less on topic)
    as a share of the most those terms could score."""
    subject = analyzer.subject_terms(query)
    if len(subject) != len(terms):
        ids = _ids(snap, subject)
        bm25 = snap.scores(ids) if ids else np.zeros(snap.n_chunks)
    return bm25 / _most(snap, subject)


def _relevant(
    snap: Snapshot, share: Floats, sims: Floats | None, params: PassageParams
) -> npt.NDArray[np.bool_]:
    """The passages above the floors: with a vector, its cosine or a strong BM25 share;
    without one (no model, or not embedded yet), its BM25 share."""
    lexical = share >= params.min_bm25
    if sims is None:
        return lexical
    dense = (sims >= params.min_cosine) | (share >= params.strong_bm25)
    return np.where(snap.present, dense, lexical)


def _mask(snap: Snapshot, params: PassageParams) -> npt.NDArray[np.bool_] | None:
    if not params.id_prefix and not params.id_prefixes:
        return None
    anyof = params.id_prefixes or ("",)
    docs = np.fromiter(
        (i.id.startswith(params.id_prefix) and i.id.startswith(anyof) for i in snap.infos),
        np.bool_,
        len(snap.infos),
    )
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
    mask = _mask(snap, params)
    rankings: list[list[int]] = []  # every query's BM25, then dense ranking, in that order
    lexical: dict[int, int] = {}
    dense: dict[int, int] = {}

    def add(ranking: list[int], best: dict[int, int]) -> None:
        rankings.append(ranking)
        for rank, chunk in enumerate(ranking, 1):
            best[chunk] = min(best.get(chunk, rank), rank)

    for i, query in enumerate(queries):
        terms = analyzer.query_terms(query)
        ids = _ids(snap, terms)
        bm25 = snap.scores(ids) if ids else np.zeros(snap.n_chunks)
        share = _share(analyzer, snap, query, terms, bm25)
        sims = None if query_vectors is None else _cosines(snap, query_vectors[i])
        relevant = _relevant(snap, share, sims, params)
        keep = relevant if mask is None else relevant & mask
        if ids:
            add(_top(bm25, keep, DEPTH), lexical)
        if sims is not None:
            add(_top(sims + 2.0, keep & snap.present, DEPTH), dense)
    fused = rrf_scores(rankings, params.rrf_k)
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
