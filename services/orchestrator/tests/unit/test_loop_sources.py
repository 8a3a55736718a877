"""Search sources in the agent loop: local only, web and local fused, one source failing."""

from __future__ import annotations

from orchestrator.schemas import Judgement
from quarry.v1 import index_pb2

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import Harness, first, harness, warnings

WEB = [f"http://site{i}.test/page" for i in range(3)]
PAGES = {u: (f"Web {i}", f"Tides on the web, fact {i}.") for i, u in enumerate(WEB)}
CHUNKS = Judgement(sufficiency="insufficient")


def _add_local(h: Harness, name: str, text: str) -> str:
    doc_id = f"local:/srv/notes/{name}"
    h.ranker.corpus.committed[doc_id] = index_pb2.Document(
        id=doc_id, title=name, markdown=text, content_hash="ab", kind="markdown"
    )
    return doc_id


async def test_local_only_never_touches_the_web() -> None:
    brain = ScriptedBrain(judgements=[CHUNKS, Judgement(sufficiency="sufficient")])
    async with harness(
        brain=brain, pages=PAGES, searcher=ScriptedSearcher(default=hits(*WEB))
    ) as h:
        note = _add_local(h, "tides.md", "Tides: the secret harbour code is 4711.")
        _add_local(h, "other.md", "Nothing relevant here.")
        events = await h.run("what is the harbour code for tides", sources=("local",))
        assert h.searcher.queries == []
        assert h.reader.calls == []  # a local document is read with GetDocument, not Read
        assert "GetDocument" in h.ranker.corpus.calls
    sources = first(events, "sources").data["sources"]
    assert [(s["url"], s["origin"]) for s in sources] == [(note, "local")]
    started = [e.data for e in events if e.type == "search.started"]
    assert [s["source"] for s in started] == ["local"]
    reads = [e.data for e in events if e.type == "read.completed"]
    assert [(r["url"], r["status"], r["origin"]) for r in reads] == [(note, "OK", "local")]
    assert first(events, "run.completed").data["status"] == "answered"
    assert h.outcome.sources[0]["origin"] == "local"


async def test_both_sources_are_fused_and_labelled() -> None:
    brain = ScriptedBrain(judgements=[CHUNKS, Judgement(sufficiency="sufficient")])
    searcher = ScriptedSearcher(default=hits(*WEB, words="tides"))
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        note = _add_local(h, "tides.md", "Tides notes: tides and more tides.")
        events = await h.run("tides", sources=("web", "local"))
        assert h.searcher.queries == ["tides"]
        assert h.ranker.corpus.searches == ["tides"]
        # The local document is read from the index; only web pages go through the reader.
        assert note not in h.reader.calls
        assert set(h.reader.calls) <= set(WEB)
        assert "GetDocument" in h.ranker.corpus.calls
    ranked = first(events, "rank.completed").data["urls"]
    assert set(ranked) == {*WEB, note}
    origins = {s["url"]: s["origin"] for s in first(events, "sources").data["sources"]}
    assert origins[note] == "local"
    assert {origins[u] for u in WEB if u in origins} == {"web"}
    assert sorted(e.data["source"] for e in events if e.type == "search.completed") == [
        "local",
        "web",
    ]


async def test_web_down_still_answers_from_local_with_a_warning() -> None:
    brain = ScriptedBrain(judgements=[Judgement(sufficiency="sufficient")])
    async with harness(brain=brain, searcher=ScriptedSearcher(down=True)) as h:
        note = _add_local(h, "tides.md", "Tides notes.")
        events = await h.run("tides", sources=("web", "local"))
    assert "search_partial" in warnings(events)
    assert [s["url"] for s in first(events, "sources").data["sources"]] == [note]


async def test_corpus_down_still_answers_from_the_web_with_a_warning() -> None:
    brain = ScriptedBrain(judgements=[Judgement(sufficiency="sufficient")])
    searcher = ScriptedSearcher(default=hits(*WEB))
    async with harness(brain=brain, searcher=searcher, ranker_up=False) as h:
        events = await h.run("tides", sources=("web", "local"))
    assert "local_unavailable" in warnings(events)
    assert first(events, "run.completed").data["status"] == "answered"
    assert {s["origin"] for s in first(events, "sources").data["sources"]} == {"web"}


async def test_local_only_with_the_corpus_down_is_an_error() -> None:
    async with harness(ranker_up=False) as h:
        events = await h.run("tides", sources=("local",))
    error = first(events, "error").data
    assert error["code"] == "search_unavailable"
    assert "SearchCorpus" in error["message"]
