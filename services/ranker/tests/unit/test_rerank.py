"""The rerank step with test doubles: order, fallbacks and the reasons it reports."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from ranker.rerank import RerankParams, rerank

TEXTS = ["zero", "one", "two", "three", "four"]
FUSED = [(0, 0.05), (1, 0.04), (2, 0.03), (3, 0.02), (4, 0.01)]


class _Prefers:
    """Scores the passage holding ``word`` highest, the rest by reverse position."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.seen: list[str] = []

    def score_many(
        self, queries: Sequence[str], passages: Sequence[str], *, until: float | None = None
    ) -> npt.NDArray[np.float64]:
        self.seen += passages
        row = [1.0 if p == self.word else -i / 10 for i, p in enumerate(passages)]
        return np.asarray([row] * len(queries), dtype=np.float64)


class _Fails:
    def score_many(
        self, queries: Sequence[str], passages: Sequence[str], *, until: float | None = None
    ) -> npt.NDArray[np.float64]:
        raise TimeoutError("too slow")


def test_the_head_is_reordered_and_the_tail_kept() -> None:
    scorer = _Prefers("two")
    out = rerank(scorer, ["q"], TEXTS, FUSED, RerankParams(candidates=3, weight=10.0))
    assert out.used
    assert out.note == ""
    assert [i for i, _ in out.fused][:1] == [2]
    assert [i for i, _ in out.fused][3:] == [3, 4]
    assert scorer.seen == ["zero", "one", "two"]
    # Scores stay monotonic down the list, and are the fused ones.
    scores = [s for _, s in out.fused]
    assert scores == sorted(scores, reverse=True)
    assert sorted(scores) == sorted(s for _, s in FUSED)


def test_a_low_weight_keeps_the_fused_order_on_a_near_tie() -> None:
    out = rerank(_Prefers("one"), ["q"], TEXTS, FUSED, RerankParams(candidates=5, weight=0.1))
    assert out.fused[0][0] == 0


def test_off_missing_and_failing_keep_the_fused_order_and_say_why() -> None:
    off = rerank(_Prefers("two"), ["q"], TEXTS, FUSED, RerankParams(enabled=False))
    missing = rerank(None, ["q"], TEXTS, FUSED, RerankParams())
    failed = rerank(_Fails(), ["q"], TEXTS, FUSED, RerankParams())
    single = rerank(_Prefers("zero"), ["q"], TEXTS, FUSED[:1], RerankParams())
    for out in (off, missing, failed, single):
        assert not out.used
    assert off.fused == missing.fused == failed.fused == FUSED
    assert (off.note, missing.note) == ("off", "model unavailable")
    assert "TimeoutError" in failed.note
    assert single.note
