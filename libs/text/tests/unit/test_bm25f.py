"""BM25F against hand-computed cases."""

from __future__ import annotations

import math

import pytest
from quarry_text.bm25 import idf
from quarry_text.bm25f import bm25f_scores

K1 = 1.2


def test_weighted_fields_with_equal_lengths() -> None:
    # Average lengths are 1 (title) and 2 (snippet), so no length normalisation applies.
    docs = [(["x"], ["y", "y"]), (["z"], ["x", "y"])]
    scores = bm25f_scores(["x"], docs, (2.0, 1.0))
    idf_x = math.log(1 + (2 - 2 + 0.5) / (2 + 0.5))  # ln 1.2
    assert scores[0] == pytest.approx(idf_x * 2 * (K1 + 1) / (K1 + 2))  # tf~ = 2 * 1
    assert scores[1] == pytest.approx(idf_x * 1 * (K1 + 1) / (K1 + 1))  # tf~ = 1 * 1


def test_length_normalisation_and_missing_terms() -> None:
    docs = [(["x", "a"],), (["x", "a", "b", "c", "d", "e"],), (["a"],)]
    scores = bm25f_scores(["x", "zz"], docs, (1.0,))
    idf_x = math.log(1.6)  # N = 3, df = 2
    tf0 = 1 / (0.25 + 0.75 * 2 / 3)  # avg length 3
    tf1 = 1 / (0.25 + 0.75 * 6 / 3)
    assert scores[0] == pytest.approx(idf_x * tf0 * (K1 + 1) / (K1 + tf0))
    assert scores[1] == pytest.approx(idf_x * tf1 * (K1 + 1) / (K1 + tf1))
    assert scores[2] == 0.0
    assert scores[0] > scores[1]  # the shorter document wins at equal tf


def test_tf_is_saturated_once_across_fields() -> None:
    # One term in both fields: BM25F sums weighted tf before saturating, so the score is
    # less than the sum of two per-field BM25 scores.
    docs = [(["x"], ["x"]), (["y"], ["y"])]
    both = bm25f_scores(["x"], docs, (1.0, 1.0))[0]
    idf_x = idf(1, 2)
    assert both == pytest.approx(idf_x * 2 * (K1 + 1) / (K1 + 2))
    assert both < 2 * idf_x


def test_repeated_query_terms_count_once() -> None:
    docs = [(["x"],), (["y"],)]
    assert bm25f_scores(["x", "x"], docs, (1.0,)) == bm25f_scores(["x"], docs, (1.0,))


def test_zero_weight_field_does_not_score() -> None:
    docs = [(["x"], []), ([], ["x"])]
    scores = bm25f_scores(["x"], docs, (1.0, 0.0))
    assert scores[0] > 0.0
    assert scores[1] == 0.0


def test_empty_inputs() -> None:
    assert bm25f_scores([], [(["x"],)], (1.0,)) == [0.0]
    assert bm25f_scores(["x"], [], (1.0,)) == []
    assert bm25f_scores(["x"], [([],), ([],)], (1.0,)) == [0.0, 0.0]


def test_rejects_bad_weights_and_shapes() -> None:
    with pytest.raises(ValueError, match="weights"):
        bm25f_scores(["x"], [(["x"],)], (-1.0,))
    with pytest.raises(ValueError, match="one term list per weight"):
        bm25f_scores(["x"], [(["x"],)], (1.0, 1.0))
