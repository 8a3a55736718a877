"""Evidence shapes: passages grouped by page with snippets kept, and the chunk_per_url baseline."""

from __future__ import annotations

from orchestrator.config import Settings
from orchestrator.core.ask import evidence
from orchestrator.core.ask.domain import Passage, SearchHit
from orchestrator.core.ask.evidence import (
    CHUNK_CHARS,
    GAP,
    chunk_per_url,
    from_passages,
    snippets_for,
)
from orchestrator.core.ask.fusion import fuse_passages
from orchestrator.core.ask.synthesise import source_list


def _hit(url: str, snippet: str, rank: int = 1) -> SearchHit:
    return SearchHit(url, url.upper(), snippet, rank)


def test_passages_are_grouped_per_page_best_first_a_continuation_after_its_passage() -> None:
    passages = [
        Passage("http://b.test/", "B", "b best", 3.0, index=4),
        Passage("http://a.test/", "A", "a second", 2.0, index=2),
        Passage("http://b.test/", "B", "b first", 1.0, index=1),
        Passage("http://b.test/", "B", "b next", 0.5, index=5),
    ]
    sources = from_passages(passages, [])
    assert [s.url for s in sources] == ["http://b.test/", "http://a.test/"]
    assert sources[0].text == f"b best\n\nb next{GAP}b first"
    assert sources[0].passages == ("b best", "b next", "b first")
    assert sources[0].kind == "passages"


def test_a_snippet_follows_the_best_passage_unless_it_is_held_and_unread_ones_follow() -> None:
    passages = [
        Passage("http://a.test/", "A", "The tower is tall.", 1.0),
        Passage("http://b.test/", "B", "It was built in 1889. It is 330 m tall.", 1.0),
    ]
    snippets = [
        _hit("http://a.test/", "Height: 330 metres"),
        _hit("http://b.test/", "It is 330 m  tall."),
        _hit("http://c.test/", "Opened to the public in May 1889", 3),
    ]
    a, b, c = from_passages(passages, snippets)
    assert a.text == f"The tower is tall.{GAP}Height: 330 metres"
    assert a.passages == ("The tower is tall.", "Height: 330 metres")
    assert b.passages == ("It was built in 1889. It is 330 m tall.",)
    assert (c.url, c.kind, c.passages) == (
        "http://c.test/",
        "snippet",
        ("Opened to the public in May 1889",),
    )


def test_snippets_for_keeps_the_best_distinct_non_empty_ones() -> None:
    hits = [_hit("http://a.test/", "x"), _hit("http://a.test/", "y"), _hit("http://b.test/", " ")]
    hits.append(_hit("http://c.test/", "z"))
    assert [h.snippet for h in snippets_for(hits, 5)] == ["x", "z"]
    assert [h.snippet for h in snippets_for(hits, 1)] == ["x"]


def test_chunk_per_url_cuts_each_chunk_as_before() -> None:
    (only,) = chunk_per_url([Passage("http://a.test/", "A", "word " * 1000)])
    assert len(only.text) == CHUNK_CHARS
    assert only.text.endswith("…")
    assert only.passages == (only.text,)


def test_the_budget_is_sized_to_the_models_context_unless_set() -> None:
    assert Settings().evidence_budget_tokens() == 8192 - 1024 - 1536
    assert Settings(LLM_NUM_CTX=32768).evidence_budget_tokens() == 32768 - 1024 - 1536
    assert Settings(LLM_NUM_CTX=1024).evidence_budget_tokens() == 512
    assert Settings(evidence_tokens=3000).evidence_budget_tokens() == 3000


def test_fused_passages_merge_two_rankings_by_rank_and_keeps_each_passage_once() -> None:
    web = [Passage("http://a.test", "A", "a0", 9.0, 0), Passage("http://b.test", "B", "b3", 8.0, 3)]
    local = [
        Passage("local:/n.md", "N", "n1", 0.03, 1),
        Passage("http://a.test", "A", "a0", 0.02, 0),  # the same passage in both lists
        Passage("local:/n.md", "N", "n2", 0.01, 2),
    ]
    merged = fuse_passages([web, local])
    # a0 is ranked by both (1st and 2nd): first; then the two firsts' runners-up by rank.
    assert [(p.url, p.index) for p in merged] == [
        ("http://a.test", 0),
        ("local:/n.md", 1),
        ("http://b.test", 3),
        ("local:/n.md", 2),
    ]


def test_within_budget_skips_what_does_not_fit_and_keeps_later_small_passages() -> None:
    big, small = "x" * 400, "y" * 40  # 100 and 10 tokens
    ps = [Passage("u", "", big, 0, 0), Passage("u", "", big, 0, 1), Passage("u", "", small, 0, 2)]
    assert [p.index for p in evidence.within_budget(ps, 115)] == [0, 2]
    assert evidence.within_budget(ps, 5) == []


def test_snippet_of_ends_at_a_sentence_when_one_is_near_the_limit() -> None:
    text = "First sentence here. " * 30
    cut = evidence.snippet_of(text, 100)
    assert cut.endswith("here.")
    assert len(cut) <= 100
    assert evidence.snippet_of("short  text\n", 100) == "short text"
    assert evidence.snippet_of("x" * 300, 100) == "x" * 100 + "…"


def test_fit_drops_the_weakest_parts_and_lists_exactly_the_text_kept() -> None:
    passages = [
        Passage("http://a.test/", "A", "Best answer here.", 3.0, index=7),
        Passage("http://a.test/", "A", "Opening " + "words " * 60, 2.0, index=0),
    ]
    (source,) = from_passages(passages, [_hit("http://a.test/", "The engine's snippet.")])
    assert source.passages[0] == "Best answer here."
    kept = evidence.fit(source, 60)
    assert kept.passages == ("Best answer here.", "The engine's snippet.")
    assert kept.text == f"Best answer here.{GAP}The engine's snippet."
    cut = evidence.fit(source, 10)
    assert cut.text == cut.passages[0] == "Best answ…"
    assert evidence.fit(source, 10_000) is source


def test_source_cards_show_the_pages_own_text_not_prompt_labels() -> None:
    """The `sources` payload (what the web UI's cards show) carries only the page's words."""
    passages = [Passage("http://a.test/", "A", "The tower is 330 m tall.", 1.0, index=3)]
    snippets = [_hit("http://a.test/", "Eiffel Tower facts: opened in 1889.")]
    (card,) = source_list(from_passages(passages, snippets))
    assert card["excerpt"] == "The tower is 330 m tall. […] Eiffel Tower facts: opened in 1889."
    assert card["passages"] == ["The tower is 330 m tall.", "Eiffel Tower facts: opened in 1889."]
    assert "snippet" not in card["excerpt"].lower()


def test_a_snippet_cut_before_its_value_is_completed_from_the_page_read() -> None:
    # sqlite3-doc's limits.html as the reader writes it (markdown escapes included), and a
    # search snippet that stops just before the value.
    page = (
        "2. **Maximum Number Of Columns**\nThe SQLITE\\_MAX\\_COLUMN compile-time parameter is "
        "used to set an upper bound on the number of columns in a table.\nThe default setting "
        "for SQLITE\\_MAX\\_COLUMN is 2000. You can change it at compile time."
    )
    snippet = "The default setting for SQLITE_MAX_COLUMN is …"
    assert evidence.complete_snippet(snippet, page) == (
        "The default setting for SQLITE_MAX_COLUMN is 2000."
    )
    whole = "You can change it at compile time."
    assert evidence.complete_snippet(whole, page) == whole
    assert evidence.complete_snippet("Nothing of this is on the page, …", page) == (
        "Nothing of this is on the page, …"
    )
