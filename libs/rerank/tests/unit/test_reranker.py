"""The reranker and the sentence splitter on the real model (no network)."""

from __future__ import annotations

import time

import pytest
from quarry_embed import CachedEmbedder, Embedder
from quarry_rerank import Reranker, RerankTimeout, split_sentences, units

LIGHTHOUSE = (
    "The harbour has a small market every Saturday with fish and vegetables. Ferries leave for "
    "the islands twice a day. The old lighthouse rises 48 metres above the rocks at the "
    "harbour mouth. Its lamp was automated in 1987."
)
BAKERY = "The bakery on the square sells rye bread and cinnamon buns. It opens at six."


@pytest.fixture(scope="module")
def reranker() -> Reranker:
    return Reranker(CachedEmbedder(Embedder.load(threads=1, batch_size=4)))


def test_sentences_split_at_ends_and_lines_not_at_versions() -> None:
    text = "# Limits\n\n- SQLite 3.7.0 added WAL. It is on.\n| a | b |\nNo end here"
    assert split_sentences(text) == [
        "Limits",
        "SQLite 3.7.0 added WAL.",
        "It is on.",
        "a | b",
        "No end here",
    ]
    assert units("One. Two.") == ["One.", "Two.", "One. Two."]
    assert units("   ") == []


def test_the_passage_holding_the_answer_scores_highest(reranker: Reranker) -> None:
    scores = reranker.score("How tall is the lighthouse?", [BAKERY, LIGHTHOUSE])
    assert len(scores) == 2
    assert scores[1] > scores[0] + 0.1


def test_score_many_is_one_row_per_query(reranker: Reranker) -> None:
    out = reranker.score_many(["lighthouse height", "where to buy bread"], [LIGHTHOUSE, BAKERY])
    assert out.shape == (2, 2)
    assert out[0, 0] > out[0, 1]
    assert out[1, 1] > out[1, 0]
    assert reranker.score_many([], [BAKERY]).shape == (0, 1)
    assert reranker.score("q", []) == []


def test_a_passed_deadline_raises_after_the_first_batch(reranker: Reranker) -> None:
    many = [f"Passage number {i} talks about topic {i}. It has two sentences." for i in range(40)]
    with pytest.raises(RerankTimeout):
        reranker.score_many(["topic"], many, until=time.monotonic() - 1)
    # A few units fit in the first batch, which always runs.
    assert reranker.score_many(["topic"], many[:2], until=time.monotonic() - 1).shape == (1, 2)


def test_scores_are_thread_safe(reranker: Reranker) -> None:
    from concurrent.futures import ThreadPoolExecutor

    expected = reranker.score("lighthouse", [LIGHTHOUSE, BAKERY])
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: reranker.score("lighthouse", [LIGHTHOUSE, BAKERY]), range(8)))
    assert all(g == pytest.approx(expected, abs=1e-5) for g in got)
