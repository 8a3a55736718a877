"""Passage reranking by sentence-level MaxSim over all-MiniLM-L6-v2 (quarry-embed).

No cross-encoder ships inside a PyPI package with a usable licence (docs/rerank.md lists
what was searched), so the reranker reuses the embedding model the ranker already loads,
in a way its passage-level dense pass does not: a passage's score for a query is the best
cosine between the query and any *sentence unit* of the passage (a sentence or two
neighbours, :func:`quarry_rerank.sentences.units`), blended with the whole-passage cosine.
A 120-word passage's mean-pooled vector dilutes the one sentence that answers; MaxSim finds
it. Unit vectors go through the caller's embedder, so with a cached embedder a passage's
units are embedded once across rounds and questions.

Thread-safe (no mutable state; the embedder must be thread-safe, as quarry_embed's are).
CPU-bound: call it from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
from quarry_embed.batches import batches

from quarry_rerank.sentences import units

Vectors = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float64]
# Weight of the whole-passage cosine beside the best unit's (chosen on the tuning sets).
PASSAGE_WEIGHT = 0.3
# Units embedded per onnxruntime run between deadline checks.
BATCH = 16


class Embeds(Protocol):
    """Vectors for texts (quarry_embed.Embedder and CachedEmbedder fit)."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised rows, one per text."""
        ...


class RerankTimeout(Exception):
    """The deadline passed before every passage was scored; callers keep their own order."""


class Reranker:
    """Scores passages against queries; see the module docstring."""

    def __init__(self, embedder: Embeds, *, passage_weight: float = PASSAGE_WEIGHT) -> None:
        """Use ``embedder`` (share the ranker's cached one: passage vectors are then hits)."""
        if not 0.0 <= passage_weight <= 1.0:
            raise ValueError("passage_weight must be between 0 and 1")
        self._embedder = embedder
        self._w = passage_weight

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage for ``query``, in input order; higher is better (a cosine
        blend, in [-1, 1])."""
        return [float(s) for s in self.score_many([query], passages)[0]]

    def score_many(
        self, queries: Sequence[str], passages: Sequence[str], *, until: float | None = None
    ) -> Matrix:
        """Scores of shape ``(len(queries), len(passages))``.

        Units, then whole passages, are embedded in batches; when ``until``
        (``time.monotonic()``) passes between two batches, :class:`RerankTimeout` is raised (the
        first batch of each always runs, so a small call completes).
        """
        out = np.zeros((len(queries), len(passages)), dtype=np.float64)
        if not queries or not passages:
            return out
        per_passage = [units(p) or [p] for p in passages]
        flat = [u for us in per_passage for u in us]
        q = self._embedder.embed(list(queries))
        u = self._embed_until(flat, until)
        whole = self._embed_until(list(passages), until)
        sims = (q @ u.T).astype(np.float64)
        start = 0
        for j, us in enumerate(per_passage):
            best = sims[:, start : start + len(us)].max(axis=1)
            start += len(us)
            out[:, j] = (1.0 - self._w) * best + self._w * (q @ whole[j]).astype(np.float64)
        return out

    def _embed_until(self, texts: list[str], until: float | None) -> Vectors:
        """Vectors in batches; past ``until`` (after the first batch) raises."""
        deadline = float("inf") if until is None else until
        parts = [
            self._embedder.embed(batch)
            for batch in batches(texts, BATCH, until=deadline, first_free=True)
        ]
        done = sum(len(p) for p in parts)
        if done < len(texts):
            raise RerankTimeout(f"scored {done} of {len(texts)} texts before the deadline")
        return np.concatenate(parts)
