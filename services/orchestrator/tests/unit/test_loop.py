"""The agent loop, branch by branch, with real gRPC clients against fake reader/ranker servers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from orchestrator.core.schemas import Judgement, Plan
from orchestrator.core.sessions import Turn

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import first, harness, types, warnings

URLS = [f"http://site{i}.test/page" for i in range(12)]
PAGES = {
    u: (f"Title {i}", f"Quarry is a self-hosted answer engine. Fact {i}.")
    for i, u in enumerate(URLS)
}
INSUFFICIENT = Judgement(sufficiency="insufficient")
SUFFICIENT = Judgement(sufficiency="sufficient")


async def _settled(check: Callable[[], bool]) -> None:
    """Wait until the fake reader has seen what the client did (a fixed sleep was a guess)."""
    async with asyncio.timeout(30):
        while not check():  # noqa: ASYNC110 - the fake's counters offer no event to await
            await asyncio.sleep(0.01)


def _searcher(**results: list[str]) -> ScriptedSearcher:
    return ScriptedSearcher(
        results={q: hits(*urls, words="quarry") for q, urls in results.items()},
        default=hits(*URLS[:4], words="quarry"),
    )


async def test_clarify_streams_the_question_and_stops() -> None:
    brain = ScriptedBrain(plans=[Plan(action="clarify", clarifying_question="Which Quarry?")])
    async with harness(brain=brain) as h:
        events = await h.run("what about it?")
    assert types(events) == ["run.started", "plan", "clarify", "run.completed"]
    assert first(events, "clarify").data == {"question": "Which Quarry?"}
    assert first(events, "run.completed").data["status"] == "clarify"
    assert h.searcher.queries == []


async def test_answer_from_history_does_not_search() -> None:
    turn = Turn(
        "what is quarry",
        "An answer engine [1].",
        ({"n": 1, "url": "http://old.test/", "title": "Old", "excerpt": "Quarry answers."},),
        "answered",
        0.0,
    )
    brain = ScriptedBrain(plans=[Plan(history_sufficiency="sufficient")])
    async with harness(brain=brain) as h:
        events = await h.run("and who runs it?", history=[turn])
    assert h.searcher.queries == []
    assert first(events, "sources").data["sources"][0]["url"] == "http://old.test/"
    assert first(events, "run.completed").data["status"] == "from_history"
    assert h.outcome.status == "from_history"


async def test_snippets_sufficient_cancels_prefetched_reads() -> None:
    brain = ScriptedBrain(judgements=[SUFFICIENT], judge_delay=0.3)
    async with harness(brain=brain, pages=PAGES, reader_delay=5.0, searcher=_searcher()) as h:
        events = await h.run()
        await _settled(lambda: h.reader.inflight == 0)  # the server noticed the cancellations
        assert h.reader.cancelled >= 1
    judge = first(events, "judge")
    assert (judge.data["stage"], judge.data["verdict"]) == ("snippets", "sufficient")
    assert first(events, "read.started").data["speculative"] is True
    assert types(events).index("read.started") < types(events).index("judge")
    assert "chunks.ranked" not in types(events)
    assert first(events, "run.completed").data["status"] == "answered"
    assert next(s["excerpt"] for s in first(events, "sources").data["sources"]).startswith(
        "snippet"
    )


async def test_chunks_sufficient_answers_from_pages_with_sources_first() -> None:
    brain = ScriptedBrain(judgements=[INSUFFICIENT, SUFFICIENT])
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run()
    order = types(events)
    assert order.index("sources") < order.index("answer.delta")
    assert order.count("read.completed") == 4
    chunks = first(events, "chunks.ranked").data
    assert chunks["pages"] == 4
    sources = first(events, "sources").data["sources"]
    assert [s["n"] for s in sources] == [1, 2, 3, 4]
    assert all("Quarry is a self-hosted" in s["excerpt"] for s in sources)
    done = first(events, "run.completed").data
    assert (done["status"], done["rounds"], done["pages_read"]) == ("answered", 1, 4)
    assert {"plan", "search", "rank", "judge", "read", "chunks", "synthesis"} <= set(
        done["timings_ms"]
    )
    completed = first(events, "answer.completed").data
    assert completed["cited"] == [1]


async def test_gap_loop_searches_gaps_and_never_rereads_a_url() -> None:
    brain = ScriptedBrain(
        plans=[Plan(optimized_query="quarry engine")],
        judgements=[
            INSUFFICIENT,
            Judgement(sufficiency="partial", gap_queries=["quarry license", "quarry speed"]),
            INSUFFICIENT,
            SUFFICIENT,
        ],
    )
    searcher = _searcher(
        **{
            "quarry engine": URLS[:3],
            "quarry license": URLS[2:5],
            "quarry speed": URLS[5:6],
        }
    )
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        events = await h.run()
        assert sorted(h.reader.calls) == sorted(URLS[:6])
    assert searcher.queries == ["quarry engine", "quarry license", "quarry speed"]
    done = first(events, "run.completed").data
    assert (done["rounds"], done["pages_read"]) == (2, 6)
    assert "search_limit" not in warnings(events)
    assert len(first(events, "sources").data["sources"]) == 6


async def test_exhaustion_answers_with_search_limit_warning() -> None:
    gaps = Judgement(sufficiency="insufficient", gap_queries=["more"])
    brain = ScriptedBrain(judgements=[INSUFFICIENT, gaps] * 3)
    searcher = ScriptedSearcher(script=[hits(*URLS[:2]), hits(*URLS[2:4]), hits(*URLS[4:6])])
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        events = await h.run()
    done = first(events, "run.completed").data
    assert (done["status"], done["rounds"], done["pages_read"]) == ("answered", 3, 6)
    assert "search_limit" in warnings(events)
    assert "error" not in types(events)


async def test_invalid_llm_output_falls_back_to_defaults_with_a_warning() -> None:
    async with harness(brain=ScriptedBrain(invalid=True), pages=PAGES, searcher=_searcher()) as h:
        events = await h.run()
    assert first(events, "plan").data["used_default"] is True
    assert first(events, "judge").data["verdict"] == "insufficient"
    assert warnings(events).count("llm_invalid_output") == 1
    assert "insufficient_evidence" in warnings(events)
    assert first(events, "run.completed").data["status"] == "answered"


async def test_reader_down_answers_from_snippets() -> None:
    async with harness(reader_up=False, searcher=_searcher()) as h:
        events = await h.run()
    assert "reader_unavailable" in warnings(events)
    assert {e.data["status"] for e in events if e.type == "read.completed"} == {"UNAVAILABLE"}
    sources = first(events, "sources").data["sources"]
    assert sources
    assert sources[0]["excerpt"].startswith("snippet")
    assert first(events, "run.completed").data["status"] == "answered"


async def test_reader_down_is_reported_when_the_snippets_suffice_too() -> None:
    brain = ScriptedBrain(judgements=[SUFFICIENT], judge_delay=0.5)
    async with harness(reader_up=False, brain=brain, searcher=_searcher()) as h:
        events = await h.run()
    assert first(events, "judge").data["verdict"] == "sufficient"
    assert "reader_unavailable" in warnings(events)
    assert first(events, "sources").data["sources"][0]["excerpt"].startswith("snippet")
    assert first(events, "run.completed").data["status"] == "answered"


async def test_ranker_down_keeps_engine_order() -> None:
    brain = ScriptedBrain(judgements=[INSUFFICIENT, SUFFICIENT])
    async with harness(ranker_up=False, pages=PAGES, brain=brain, searcher=_searcher()) as h:
        events = await h.run()
    assert "ranker_unavailable" in warnings(events)
    rank = first(events, "rank.completed").data
    assert (rank["ranked_by"], rank["urls"]) == ("engine", URLS[:4])
    assert first(events, "chunks.ranked").data["ranked_by"] == "page_order"
    assert first(events, "run.completed").data["status"] == "answered"


async def test_llm_down_is_an_error_naming_the_llm_url() -> None:
    async with harness(brain=ScriptedBrain(fail=True)) as h:
        events = await h.run()
    error = first(events, "error").data
    assert error["code"] == "llm_unavailable"
    assert "http://llm.test:11434" in error["message"]
    assert first(events, "run.completed").data["status"] == "error"


async def test_searxng_down_is_an_error_naming_searxng_when_unsourced_is_off() -> None:
    async with harness(searcher=ScriptedSearcher(down=True), allow_unsourced=False) as h:
        events = await h.run()
    error = first(events, "error").data
    assert error["code"] == "search_unavailable"
    assert "SearXNG" in error["message"]
    assert first(events, "run.completed").data["status"] == "error"


async def test_question_budget_ends_with_best_answer_and_warning() -> None:
    brain = ScriptedBrain(judgements=[INSUFFICIENT])
    async with harness(
        brain=brain,
        pages=PAGES,
        reader_delay=30.0,
        searcher=_searcher(),
        question_budget_s=1.5,
        synthesis_reserve_s=0.5,
    ) as h:
        events = await h.run()
        await _settled(lambda: h.reader.inflight == 0)
    assert "budget_exhausted" in warnings(events)
    assert first(events, "run.completed").data["status"] == "answered"
    assert first(events, "sources").data["sources"][0]["excerpt"].startswith("snippet")


async def test_prefetch_off_reads_only_after_the_judge() -> None:
    brain = ScriptedBrain(judgements=[SUFFICIENT])
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run(prefetch=False)
    assert "read.started" not in types(events)
    assert h.reader.calls == []


async def test_unresponsive_engines_become_one_warning() -> None:
    searcher = _searcher()
    searcher.unresponsive = ["brave", "qwant"]
    async with harness(brain=ScriptedBrain(judgements=[SUFFICIENT]), searcher=searcher) as h:
        events = await h.run()
    warning = next(e.data for e in events if e.type == "warning")
    assert warning["code"] == "unresponsive_engines"
    assert "brave" in warning["message"]
    assert "qwant" in warning["message"]


async def test_prefetch_ranks_chunks_while_the_snippet_judge_thinks() -> None:
    brain = ScriptedBrain(judgements=[INSUFFICIENT, SUFFICIENT], judge_delay=0.5)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run()
    order = types(events)
    assert order.index("chunks.ranked") < order.index("judge")
    assert order.count("chunks.ranked") == 1
    assert brain.judged[1][0].kind == "passages"


async def test_a_follow_up_with_nothing_new_ends_the_search() -> None:
    gaps = Judgement(sufficiency="insufficient", gap_queries=["again"])
    brain = ScriptedBrain(judgements=[INSUFFICIENT, gaps])
    searcher = ScriptedSearcher(script=[hits(*URLS[:2]), hits(*URLS[:2])])
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        events = await h.run()
    assert searcher.queries == ["what is quarry", "again"]
    assert "insufficient_evidence" in warnings(events)
    done = first(events, "run.completed").data
    assert (done["status"], done["rounds"], done["pages_read"]) == ("answered", 2, 2)
    assert len(brain.judged) == 2


async def test_budget_cuts_a_slow_answer_short_but_still_completes_it() -> None:
    brain = ScriptedBrain(
        judgements=[SUFFICIENT], answer_text=" ".join(["word"] * 200), token_delay=0.02
    )
    async with harness(
        brain=brain, searcher=_searcher(), question_budget_s=1.0, synthesis_reserve_s=0.5
    ) as h:
        events = await h.run(prefetch=False)
    assert "budget_exhausted" in warnings(events)
    deltas = [e for e in events if e.type == "answer.delta"]
    assert 0 < len(deltas) < 200
    assert first(events, "answer.completed").data["text"].startswith("word")
    assert first(events, "run.completed").data["status"] == "answered"
    assert brain.inflight == 0


async def test_a_rewrite_that_finds_nothing_falls_back_to_the_question() -> None:
    brain = ScriptedBrain(plans=[Plan(optimized_query="not sure")])
    searcher = ScriptedSearcher(results={"not sure": []}, default=hits(*URLS[:2], words="quarry"))
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        events = await h.run("what is quarry")
    assert h.searcher.queries == ["not sure", "what is quarry"]
    searches = [(e.data["round"], e.data["query"]) for e in events if e.type == "search.started"]
    assert searches == [(1, "not sure"), (1, "what is quarry")]
    assert first(events, "run.completed").data == first(events, "run.completed").data | {
        "status": "answered",
        "rounds": 1,
    }


async def test_no_results_for_the_question_itself_is_an_error_when_unsourced_is_off() -> None:
    searcher = ScriptedSearcher(default=[])
    async with harness(searcher=searcher, allow_unsourced=False) as h:
        events = await h.run("what is quarry")
    assert h.searcher.queries == ["what is quarry"]
    assert first(events, "error").data["code"] == "no_results"
