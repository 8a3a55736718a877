"""<think> removal: whole texts and streams split at every possible point."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st
from orchestrator.core.think import ThinkFilter, strip_think


def run_filter(deltas: list[str]) -> str:
    f = ThinkFilter()
    return "".join(f.feed(d) for d in deltas) + f.flush()


def test_strip_think_whole_texts() -> None:
    assert strip_think('<think>a\nb</think>\n{"x": 1}') == '{"x": 1}'
    assert strip_think("reasoning only</think> answer") == "answer"
    assert strip_think("<think>never closed") == ""
    assert strip_think("no tags [1].") == "no tags [1]."


def test_filter_char_by_char() -> None:
    text = "<think>I should cite [3]</think>\n\nThe answer [1]. Then <b>bold</b> <thin"
    assert run_filter(list(text)) == "The answer [1]. Then <b>bold</b> <thin"


def test_filter_keeps_text_between_blocks() -> None:
    deltas = ["Intro ", "<think>x</think>", "middle ", "<think>", "y", "</think>", "end"]
    assert run_filter(deltas) == "Intro middle end"


@given(
    st.lists(st.sampled_from(["a", " ", "<", ">", "/", "think", "<think>", "</think>", "[1]"])),
    st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_any_split_gives_the_same_text(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    deltas = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert run_filter(deltas) == run_filter([text])
    assert "<think>" not in run_filter(deltas)
