"""The real model, loaded from the installed packages with no network."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from quarry_embed import (
    DIM,
    CachedEmbedder,
    Embedder,
    EmbedderUnavailable,
    Vectors,
    batches,
    load_or_none,
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder.load(threads=1, batch_size=4)


def test_vectors_are_unit_length_float32_in_input_order(embedder: Embedder) -> None:
    texts = ["short", "a much longer sentence about the height of the Eiffel Tower", "", "x y"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, DIM)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Batched by length, yet each row is the vector of its own text.
    for text, row in zip(texts, vectors, strict=True):
        assert float(embedder.embed([text])[0] @ row) > 0.9999


def test_related_texts_score_higher_than_unrelated_ones(embedder: Embedder) -> None:
    q, answer, unrelated = embedder.embed(
        [
            "How tall is the Eiffel Tower?",
            "The tower in Paris rises 330 metres above the ground.",
            "Bananas are a good source of potassium.",
        ]
    )
    assert float(q @ answer) > 0.4
    assert float(q @ answer) > float(q @ unrelated) + 0.2


def test_empty_input_gives_an_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, DIM)


def test_long_text_is_truncated_not_refused(embedder: Embedder) -> None:
    vectors = embedder.embed(["word " * 5000])
    assert vectors.shape == (1, DIM)
    assert np.isfinite(vectors).all()


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="cannot"):
        Embedder.load(model_path=tmp_path / "absent.onnx")
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(EmbedderUnavailable):
        Embedder.load(model_path=bad)


def test_load_or_none_loads_the_real_model() -> None:
    loaded = load_or_none(threads=1)
    assert loaded is not None
    assert loaded.embed(["x"]).shape == (1, DIM)


class _Counting:
    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return self.inner.embed(texts)


def test_cache_embeds_each_text_once_and_stays_bounded(embedder: Embedder) -> None:
    counting = _Counting(embedder)
    cache = CachedEmbedder(counting, max_entries=3)
    first = cache.embed(["a", "b", "a"])
    assert counting.texts == ["a", "b"]
    again = cache.embed(["b", "a", "c"])
    assert counting.texts == ["a", "b", "c"]
    assert np.array_equal(first[0], again[1])
    assert np.array_equal(first[1], again[0])
    cache.embed(["d"])  # evicts the least recently used ("b")
    assert len(cache) == 3
    cache.embed(["b"])
    assert counting.texts == ["a", "b", "c", "d", "b"]


def test_batches_stop_at_the_deadline_or_when_told() -> None:
    # One loop for the ranker's dense pass and the reranker (quarry_embed.batches).
    texts = [str(i) for i in range(10)]
    assert [len(b) for b in batches(texts, 4, until=float("inf"))] == [4, 4, 2]
    assert list(batches(texts, 4, until=0.0)) == []  # past the deadline before the first
    assert [len(b) for b in batches(texts, 4, until=0.0, first_free=True)] == [4]
    stops = iter([False, True])
    assert [len(b) for b in batches(texts, 4, until=float("inf"), stop=lambda: next(stops))] == [4]
