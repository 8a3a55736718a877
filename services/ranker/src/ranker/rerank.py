"""The rerank step of RankPassages: the fused (BM25 + dense RRF) shortlist reordered by the
reranker (quarry_rerank: sentence-level MaxSim over the embedding model), within a time bound.

Only the top ``candidates`` of the fused order are rescored; the rest keep their fused order
below them. The reranker's order is fused once more with the fused order (RRF, the reranker
weighted ``weight``), so a passage that BM25 found on an exact flag or identifier is not
dropped for one that merely reads alike. Any failure (model missing, deadline passed, an
error) keeps the fused order and says why in ``Reranked.note``, as the dense fallback does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

Fused = list[tuple[int, float]]


class Scores(Protocol):
    """quarry_rerank.Reranker fits."""

    def score_many(
        self, queries: Sequence[str], passages: Sequence[str], *, until: float | None = None
    ) -> npt.NDArray[np.float64]:
        """Scores of shape (queries, passages); raises on a passed deadline."""
        ...


@dataclass(frozen=True)
class RerankParams:
    """The rerank knobs (RANKER_RERANK*)."""

    enabled: bool = True
    candidates: int = 20
    seconds: float = 2.0
    weight: float = 2.0
    rrf_k: int = 10


@dataclass(frozen=True)
class Reranked:
    """The order after the step, and whether the reranker took part (else why not)."""

    fused: Fused
    used: bool
    note: str


def rerank(
    scorer: Scores | None,
    queries: Sequence[str],
    texts: Sequence[str],
    fused: Fused,
    params: RerankParams,
) -> Reranked:
    """Reorder the head of ``fused`` (indices into ``texts``); see the module docstring."""
    if not params.enabled:
        return Reranked(fused, False, "off")
    if scorer is None:
        return Reranked(fused, False, "model unavailable")
    head = fused[: params.candidates]
    if len(head) < 2:
        return Reranked(fused, False, "fewer than two candidates")
    until = time.monotonic() + params.seconds
    try:
        scores = scorer.score_many(list(queries), [texts[i] for i, _ in head], until=until)
    except Exception as err:  # noqa: BLE001 -- any failure keeps the fused order
        reason = f"{type(err).__name__}: {err}"
        logger.warning("rerank skipped; fused order kept", extra={"reason": reason})
        return Reranked(fused, False, reason)
    best = scores.max(axis=0)
    by_model = sorted(range(len(head)), key=lambda j: -best[j])
    combined = {
        j: 1.0 / (params.rrf_k + j + 1) + params.weight / (params.rrf_k + r + 1)
        for r, j in enumerate(by_model)
    }
    order = sorted(range(len(head)), key=lambda j: -combined[j])
    # The head keeps its fused scores, handed out in the new order, so scores stay
    # monotonic down the list and comparable with the tail's.
    values = [s for _, s in head]
    new_head = [(head[j][0], values[r]) for r, j in enumerate(order)]
    return Reranked(new_head + fused[params.candidates :], True, "")
