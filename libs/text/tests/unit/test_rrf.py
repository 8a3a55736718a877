"""Reciprocal rank fusion: hand-computed cases and properties (the one RRF of the ranker, the
index and the orchestrator)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from quarry_text.rrf import fuse, fuse_by, rrf_scores


def test_hand_computed_two_lists() -> None:
    scores = rrf_scores([["a", "b", "c"], ["c", "a"]], k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert [item for item, _ in fuse([["a", "b", "c"], ["c", "a"]], k=60)] == ["a", "c", "b"]


def test_k_zero_and_repeats() -> None:
    # A repeat counts once, at its first position; later items keep their positions.
    assert rrf_scores([["a", "a", "b"]], k=0) == {"a": 1.0, "b": 1 / 3}
    with pytest.raises(ValueError, match="k must be"):
        rrf_scores([["a"]], k=-1)


def test_ties_keep_first_seen_order() -> None:
    assert [item for item, _ in fuse([["a", "b"], ["b", "a"]])] == ["a", "b"]
    assert fuse([]) == []


@given(
    st.lists(st.integers(0, 30), min_size=2, max_size=30, unique=True),
    st.integers(0, 200),
    st.data(),
)
def test_moving_an_item_up_never_lowers_its_score(
    items: list[int], k: int, data: st.DataObject
) -> None:
    src = data.draw(st.integers(1, len(items) - 1))
    dst = data.draw(st.integers(0, src - 1))
    moved = list(items)
    item = moved.pop(src)
    moved.insert(dst, item)
    other = data.draw(st.permutations(items))
    before = rrf_scores([items, other], k)[item]
    after = rrf_scores([moved, other], k)[item]
    assert after > before


@given(st.lists(st.lists(st.integers(0, 20), max_size=20), max_size=4), st.integers(0, 100))
def test_scores_are_bounded_by_the_number_of_lists(lists: list[list[int]], k: int) -> None:
    scores = rrf_scores(lists, k)
    assert set(scores) == {i for lst in lists for i in lst}
    for item, score in scores.items():
        holding = sum(item in lst for lst in lists)
        assert 0 < score <= holding / (k + 1) + 1e-12  # float sums may round up


def test_fuse_by_keeps_each_keys_first_appearance_in_fused_order() -> None:
    # The orchestrator's use: hits identified by URL, the first hit of a URL kept.
    web = [("a", "web"), ("b", "web"), ("a", "web again")]
    local = [("c", "local"), ("a", "local")]
    fused = fuse_by([web, local], key=lambda hit: hit[0], k=60)
    assert fused == [("a", "web"), ("c", "local"), ("b", "web")]
    assert fuse_by([[], []], key=str) == []


@given(st.lists(st.lists(st.integers(0, 15), max_size=12), max_size=4), st.integers(0, 100))
def test_fuse_by_orders_as_fuse_does_on_the_keys(lists: list[list[int]], k: int) -> None:
    tagged = [[(item, f"list {n}") for item in lst] for n, lst in enumerate(lists)]
    fused = fuse_by(tagged, key=lambda t: t[0], k=k)
    assert [t[0] for t in fused] == [item for item, _ in fuse(lists, k)]
    firsts: dict[int, str] = {}
    for lst in tagged:
        for item, tag in lst:
            firsts.setdefault(item, tag)
    assert all(tag == firsts[item] for item, tag in fused)
