"""The pure OpenAI-shape helpers: footnote citations across stream deltas, history mapping."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from orchestrator.api.openai import chat_format as fmt


def test_a_citation_split_between_deltas_is_rewritten_whole() -> None:
    stream = fmt.FootnoteStream()
    parts = ["Tides come from the Moon [", "1", "][2", "]. Also [1", "0] and [x]."]
    out = "".join(stream.feed(p) for p in parts) + stream.flush()
    assert out == "Tides come from the Moon [^1][^2]. Also [^10] and [x]."


@given(st.lists(st.sampled_from(["a", " ", "[", "]", "1", "23", "[4]", "x."]), max_size=30))
def test_streaming_equals_rewriting_the_whole_text(parts: list[str]) -> None:
    stream = fmt.FootnoteStream()
    out = "".join(stream.feed(p) for p in parts) + stream.flush()
    assert out == fmt.to_footnote_refs("".join(parts))


def test_footnotes_escape_titles_and_urls() -> None:
    block = fmt.footnotes([{"n": 1, "title": "A [b]\nc", "url": "http://x/a b)"}])
    assert block == "\n\n[^1]: [A \\[b\\] c](http://x/a%20b%29)"
    assert fmt.footnotes([]) == ""


def test_history_pairs_user_and_assistant_and_strips_footnotes() -> None:
    answer = "Paris [^1].\n\n[^1]: [France](http://fr)\n[^2]: [B](http://b)"
    turns = fmt.history_from_messages(
        [("system", "s"), ("user", "capital of France?"), ("assistant", answer), ("user", "q2")]
    )
    assert [(t.question, t.answer) for t in turns] == [
        ("capital of France?", "Paris [1]."),
        ("q2", ""),
    ]


def test_message_text_joins_text_parts_only() -> None:
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": "a"},
        {"type": "image_url", "image_url": {}},
        {"type": "text", "text": "b"},
    ]
    assert fmt.message_text(parts) == "a\nb"
    assert fmt.message_text(None) == ""
