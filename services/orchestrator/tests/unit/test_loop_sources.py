"""Search sources in the agent loop: local only, web and local fused, one source failing."""

from __future__ import annotations

from typing import Any

from orchestrator.core.ask.domain import CorpusError, LocalPassages
from orchestrator.core.schemas import Judgement
from quarry.v1 import index_pb2

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import Harness, first, harness, warnings
from services.orchestrator.tests.unit.port_doubles import PortCorpus

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
        assert h.reader.calls == []
        # Passages come from the index already chunked: no whole document crosses the wire,
        # and the ranker never sees a local document.
        assert "GetDocument" not in h.ranker.corpus.calls
        assert h.ranker.calls == ["RankResults"]
    sources = first(events, "sources").data["sources"]
    assert [(s["url"], s["origin"]) for s in sources] == [(note, "local")]
    assert sources[0]["passages"] == ["Tides: the secret harbour code is 4711."]
    started = [e.data for e in events if e.type == "search.started"]
    assert [s["source"] for s in started] == ["local"]
    assert [e for e in events if e.type == "read.completed"] == []
    ranked = first(events, "chunks.ranked").data
    assert (ranked["pages"], ranked["local_documents"], ranked["urls"]) == (0, 1, [note])
    assert first(events, "run.completed").data["status"] == "answered"
    assert h.outcome.sources[0]["origin"] == "local"


async def test_local_passages_answer_every_query_and_keep_the_best_paragraphs() -> None:
    brain = ScriptedBrain(
        judgements=[
            CHUNKS,
            Judgement(sufficiency="insufficient", gap_queries=["harbour opening hours"]),
            Judgement(sufficiency="sufficient"),
        ]
    )
    async with harness(brain=brain, max_rounds=2) as h:
        text = "Tides are daily.\n\nThe harbour code is 4711.\n\nThe harbour opens at dawn."
        note = _add_local(h, "harbour.md", text)
        _add_local(h, "bread.md", "Knead dough.")
        events = await h.run("what is the harbour code", sources=("local",))
        searches = h.ranker.corpus.passage_searches
    # Search rounds ask one query each; the passages are ranked for every query so far (the
    # question's keyword query among them: core/ask/expand.py).
    assert searches[0] == ["what is the harbour code"]
    assert searches[-1] == ["what is the harbour code", "harbour code", "harbour opening hours"]
    sources = first(events, "sources").data["sources"]
    assert [s["url"] for s in sources] == [note]
    assert "The harbour code is 4711." in sources[0]["passages"]
    assert "The harbour opens at dawn." in sources[0]["passages"]


async def test_both_sources_are_fused_and_labelled() -> None:
    brain = ScriptedBrain(judgements=[CHUNKS, Judgement(sufficiency="sufficient")])
    searcher = ScriptedSearcher(default=hits(*WEB, words="tides"))
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        note = _add_local(h, "tides.md", "Tides notes: tides and more tides.")
        events = await h.run("tides", sources=("web", "local"))
        assert h.searcher.queries == ["tides"]
        assert h.ranker.corpus.passage_searches[0] == ["tides"]
        # Only web pages go through the reader; the index serves the local passages.
        assert note not in h.reader.calls
        assert set(h.reader.calls) <= set(WEB)
        assert "GetDocument" not in h.ranker.corpus.calls
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
    async with harness(ranker_up=False, allow_unsourced=False) as h:
        events = await h.run("tides", sources=("local",))
    error = first(events, "error").data
    assert error["code"] == "search_unavailable"
    assert "SearchPassages" in error["message"]


async def test_web_and_local_passages_share_one_budget_by_rank() -> None:
    brain = ScriptedBrain(judgements=[CHUNKS, Judgement(sufficiency="sufficient")])
    searcher = ScriptedSearcher(default=hits(*WEB, words="tides"))
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        note = _add_local(h, "tides.md", "Tides notes: tides and more tides.")
        events = await h.run("tides", sources=("web", "local"))
    urls = first(events, "chunks.ranked").data["urls"]
    # Interleaved by rank: the index's best passage is second, after the ranker's best.
    assert urls[:2] == [WEB[0], note] or urls[:2] == [note, WEB[0]]
    assert set(urls) == {*WEB, note}


async def test_the_index_failing_after_the_search_keeps_the_passages_found() -> None:
    brain = ScriptedBrain(judgements=[CHUNKS, Judgement(sufficiency="sufficient")])
    async with harness(brain=brain) as h:
        note = _add_local(h, "tides.md", "Tides: the harbour code is 4711.")

        real = h.deps.corpus
        assert isinstance(real, PortCorpus)
        calls = 0

        async def flaky(*args: Any, **kwargs: Any) -> LocalPassages:
            nonlocal calls
            calls += 1
            if calls > 1:
                raise CorpusError("UNAVAILABLE", "SearchPassages failed: UNAVAILABLE")
            return await PortCorpus.search_passages(real, *args, **kwargs)

        real.search_passages = flaky  # type: ignore[method-assign]
        events = await h.run("harbour code", sources=("local",))
    assert calls == 2
    assert "local_unavailable" in warnings(events)
    sources = first(events, "sources").data["sources"]
    assert [(s["url"], s["passages"]) for s in sources] == [
        (note, ["Tides: the harbour code is 4711."])
    ]
    assert first(events, "run.completed").data["status"] == "answered"


async def test_a_run_whose_stored_sources_name_the_web_searches_nothing_when_it_is_off() -> None:
    # A research run stored while web search was on and resumed after it was turned off reaches
    # the search step with sources=("web",): the step itself applies the policy again.
    async with harness(
        pages=PAGES, searcher=ScriptedSearcher(default=hits(*WEB)), web_search="off"
    ) as h:
        events = await h.run("what causes tides", sources=("web",))
        assert h.searcher.queries == []
        assert h.reader.calls == []
    assert [e for e in events if e.type == "search.started"] == []
    assert warnings(events) == ["answered_without_sources"]
    assert "ORCHESTRATOR_WEB_SEARCH=off" in first(events, "warning").data["message"]
