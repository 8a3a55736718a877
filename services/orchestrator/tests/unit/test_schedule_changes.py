"""What changed between two runs (orchestrator/schedules/changes.py): sources by URL, claims
by word overlap, the section's Markdown and where it goes in the report. Deterministic."""

from __future__ import annotations

from orchestrator.core.schedules.changes import (
    HEADING,
    SourceRef,
    claims,
    compare,
    section,
    with_section,
)

BEFORE = """# How do tides work

## Summary

Tides are caused by the Moon's gravity [1]. Spring tides happen at new and full moon [2].
A sentence without a citation.

## Sources

[1] [All about tides](http://pages/tides)
[2] [All about spring](http://pages/spring)
"""

AFTER = """# How do tides work

## Summary

Tides are mostly caused by the gravity of the Moon [1]. Neap tides happen when the Sun and
Moon are at right angles [3].

## Sources

[1] [All about tides](http://pages/tides)
[3] [All about neap](http://pages/neap)
"""

OLD = [SourceRef("http://pages/tides", "All about tides"), SourceRef("http://pages/spring", "S")]
NEW = [SourceRef("HTTP://Pages/tides/#top", "All about tides"), SourceRef("http://pages/neap", "N")]


def test_claims_are_the_cited_sentences_without_citations_or_source_list() -> None:
    assert claims(BEFORE) == [
        "Tides are caused by the Moon's gravity.",
        "Spring tides happen at new and full moon.",
    ]


def test_sources_and_claims_added_and_dropped() -> None:
    changes = compare("r1", (BEFORE, OLD), (AFTER, NEW))
    assert [s.url for s in changes.added_sources] == ["http://pages/neap"]
    assert [s.url for s in changes.dropped_sources] == ["http://pages/spring"]
    # Rephrased, same claim: not reported; the neap claim is new, the spring one is gone.
    assert changes.added_claims == ["Neap tides happen when the Sun and Moon are at right angles."]
    assert changes.removed_claims == ["Spring tides happen at new and full moon."]
    assert compare("r1", (BEFORE, OLD), (AFTER, NEW)) == changes  # deterministic


def test_the_section_names_the_new_source_and_sits_before_the_sources() -> None:
    text = section(compare("r1", (BEFORE, OLD), (AFTER, NEW)))
    assert text.startswith(f"## {HEADING}")
    assert "[N](<http://pages/neap>)" in text
    assert "Claims no longer made" in text
    report = with_section(AFTER, text)
    assert report.index(HEADING) < report.index("## Sources")
    assert report.count("## Sources") == 1


def test_an_earlier_section_is_not_read_as_claims() -> None:
    first = with_section(BEFORE, "## What changed since the last run\n\n- Old claim here [1].\n")
    assert claims(first) == claims(BEFORE)


def test_first_run_and_no_change() -> None:
    assert "first completed run" in section(compare(None, None, (AFTER, NEW)))
    same = compare("r1", (AFTER, NEW), (AFTER, NEW))
    assert same.empty
    assert "Nothing changed" in section(same)


def test_hostile_titles_stay_text() -> None:
    evil = [SourceRef("http://x/a>b", "](javascript:alert(1)) <script>")]
    text = section(compare("r1", ("", []), ("", evil)))
    assert "<script>" not in text
    assert "](javascript" not in text
    assert "(<http://x/a%3Eb>)" in text
