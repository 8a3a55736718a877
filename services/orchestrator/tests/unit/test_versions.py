"""Version awareness: release notes rank below the current reference for a present-tense
question, and their titles say which version they describe."""

from __future__ import annotations

from orchestrator.core.ask.domain import Evidence, SearchHit
from orchestrator.core.ask.versions import (
    asks_about_versions,
    current_first,
    is_release_notes,
    labelled,
    version_of,
)

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher
from services.orchestrator.tests.unit.harness import first, harness


def _hit(url: str, title: str, rank: int) -> SearchHit:
    return SearchHit(url, title, f"About {title}", rank)


def test_release_notes_are_told_apart_with_their_version() -> None:
    assert is_release_notes("http://d.test/sqlite/releaselog/3_7_0.html", "Release 3.7.0")
    assert is_release_notes("http://d.test/git/RelNotes/2.39.0.txt", "")
    assert is_release_notes("http://d.test/docs/whatsnew.html", "What's New in 2.5")
    assert is_release_notes("http://d.test/sqlite/changes.html", "Release History Of SQLite")
    assert not is_release_notes("http://d.test/sqlite/wal.html", "Write-Ahead Logging")
    assert version_of("http://d.test/sqlite/releaselog/3_7_0.html", "") == "3.7.0"
    assert version_of("http://d.test/whatsnew.html", "What's New in 2.5") == "2.5"


def test_present_tense_questions_put_the_current_reference_first() -> None:
    hits = [
        _hit("http://d.test/whatsnew25.html", "What's New in 2.5", 1),
        _hit("http://d.test/config.html", "Configuration reference", 2),
    ]
    present = "What does the cache_size pragma do?"
    assert not asks_about_versions(present)
    assert [h.url for h in current_first(hits, present)] == [
        "http://d.test/config.html",
        "http://d.test/whatsnew25.html",
    ]
    for about in ("Which version introduced WAL?", "What changed in 2.5?", "When was it added?"):
        assert asks_about_versions(about)
        assert current_first(hits, about) == hits


def test_a_release_note_tells_the_model_which_version_it_describes() -> None:
    note = Evidence("http://d.test/releaselog/3_7_0.html", "SQLite Release 3.7.0", "WAL added.")
    title = labelled(note).title
    assert title == "SQLite Release 3.7.0 (release notes: past behaviour, version 3.7.0)"
    assert labelled(labelled(note)) == labelled(note)
    current = Evidence("http://d.test/wal.html", "Write-Ahead Logging", "WAL is ...")
    assert labelled(current) is current


async def test_a_release_note_gives_way_to_the_reference_page_and_says_its_version() -> None:
    others = ("a.html", "b.html", "c.html", "d.html", "e.html")
    urls = [f"http://d.test/{p}" for p in ("whatsnew-2.5.html", *others)]
    pages = {u: (f"Page {u[-8:]}", "Quarry bridge cache size text.") for u in urls}
    pages[urls[0]] = ("What's New in 2.5", "The cache size used to be 50.")
    pages["http://d.test/ref.html"] = ("Cache reference", "The cache size is 2000.")
    hits = [
        SearchHit(u, pages[u][0], "cache size", n)
        for n, u in enumerate([*urls, "http://d.test/ref.html"], start=1)
    ]
    searcher = ScriptedSearcher(default=hits)
    async with harness(brain=ScriptedBrain(), searcher=searcher, pages=pages) as h:
        events = await h.run("What is the cache size?", mode="speed")
    read = first(events, "rank.completed").data["urls"]
    assert "http://d.test/ref.html" in read
    assert urls[0] not in read  # six pages are read in speed: the release note gave way
    async with harness(brain=ScriptedBrain(), searcher=searcher, pages=pages) as h:
        events = await h.run("What did the cache size change to in 2.5?", mode="speed")
    assert urls[0] in first(events, "rank.completed").data["urls"]
    titles = [s["title"] for s in first(events, "sources").data["sources"]]
    assert "What's New in 2.5 (release notes: past behaviour, version 2.5)" in titles
