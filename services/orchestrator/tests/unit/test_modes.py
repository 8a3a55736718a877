"""Modes change how much work a question gets; a question waits for a loading LLM."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from orchestrator.core.ask.modes import PROFILES, resolve_mode
from orchestrator.core.ask.state import RunOptions, RunState
from orchestrator.core.budget import Deadline
from orchestrator.core.events import EventSink
from orchestrator.core.ready import ReadyGate
from orchestrator.core.schemas import Judgement, Plan
from quarry.v1 import index_pb2

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import first, harness, types

URLS = [f"http://site{i}.test/page" for i in range(12)]
PAGES = {
    u: (f"Title {i}", "Quarry is a self-hosted answer engine. " + "More words here. " * 200)
    for i, u in enumerate(URLS)
}


def _searcher() -> ScriptedSearcher:
    return ScriptedSearcher(default=hits(*URLS, words="quarry"))


def test_auto_follows_the_llm_and_a_request_overrides() -> None:
    assert resolve_mode(None, "auto", embedded_llm=True) == "speed"
    assert resolve_mode(None, "auto", embedded_llm=False) == "balanced"
    assert resolve_mode(None, "quality", embedded_llm=True) == "quality"
    assert resolve_mode("speed", "quality", embedded_llm=False) == "speed"


async def test_speed_makes_one_llm_call_for_a_clear_question() -> None:
    brain = ScriptedBrain(judgements=[Judgement(sufficiency="partial")] * 4)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("What does Quarry do?", mode="speed")
    assert first(events, "run.started").data["mode"] == "speed"
    plan = first(events, "plan").data
    assert plan["planner"] == "skipped"
    assert plan["optimized_query"] == "What does Quarry do?"
    assert "judge" not in types(events)
    done = first(events, "run.completed").data
    assert done["llm_calls"] == 1
    assert done["rounds"] == 1
    assert first(events, "read.started").data["count"] == PROFILES["speed"].top_urls
    # Evidence from the few pages read (the token budget itself is the ranker's to keep).
    sources = first(events, "sources").data["sources"]
    assert 0 < len(sources) <= (PROFILES["speed"].top_urls or 0)
    assert brain.details == [None]


async def test_balanced_plans_and_judges_and_quality_reads_more() -> None:
    judgements = [Judgement(sufficiency="partial"), Judgement(sufficiency="sufficient")]
    async with harness(
        brain=ScriptedBrain(judgements=list(judgements)), pages=PAGES, searcher=_searcher()
    ) as h:
        balanced = await h.run("What does Quarry do?", mode="balanced")
    async with harness(
        brain=ScriptedBrain(judgements=list(judgements)), pages=PAGES, searcher=_searcher()
    ) as h:
        quality = await h.run("What does Quarry do?", mode="quality")
    for events in (balanced, quality):
        assert first(events, "plan").data["planner"] == "model"
        assert first(events, "run.completed").data["llm_calls"] == 4  # plan, 2 judges, answer
    assert (
        first(quality, "read.started").data["count"] > first(balanced, "read.started").data["count"]
    )


async def test_speed_asks_the_planner_only_for_a_follow_up_that_needs_a_rewrite() -> None:
    from orchestrator.core.sessions import Turn

    turn = Turn("Who designed the Zephyrine Lighthouse?", "Mara Olsen [1].", (), "answered", 0.0)
    brain = ScriptedBrain(plans=[Plan(optimized_query="how tall is it")])
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("How tall is it?", history=[turn], mode="speed")
        assert h.searcher.queries == ["how tall is it Zephyrine Lighthouse"]
    assert first(events, "plan").data["planner"] == "model"
    assert first(events, "run.completed").data["llm_calls"] == 2


async def test_detail_reaches_the_answer() -> None:
    brain = ScriptedBrain()
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        await h.run("What does Quarry do?", mode="speed", detail="brief")
    assert brain.details == ["brief"]


async def test_a_question_waits_for_a_loading_llm_then_answers() -> None:
    probes: list[float] = []

    async def probe(timeout: float) -> bool:
        probes.append(timeout)
        return len(probes) >= 3  # the model finishes loading on the third probe

    async with harness(pages=PAGES, searcher=_searcher(), llm_wait_s=10) as h:
        h.deps = replace(h.deps, llm_gate=ReadyGate(probe, poll_s=0.01))
        events = await h.run("What does Quarry do?", mode="speed")
    progress = [e.data["stage"] for e in events if e.type == "progress"]
    assert progress == ["llm_loading", "llm_ready"]
    assert types(events).index("progress") < types(events).index("plan")
    assert first(events, "run.completed").data["status"] == "answered"


async def test_a_question_gives_up_on_an_llm_that_never_loads() -> None:
    async def never(timeout: float) -> bool:
        await asyncio.sleep(0)
        return False

    async with harness(pages=PAGES, searcher=_searcher(), llm_wait_s=0.05) as h:
        h.deps = replace(h.deps, llm_gate=ReadyGate(never, poll_s=0.01))
        events = await h.run("What does Quarry do?")
    error = first(events, "error").data
    assert error["code"] == "llm_unavailable"
    assert "LLM_WAIT_S" in error["message"]
    assert h.searcher.queries == []


async def test_every_mode_shows_the_best_passage_first_and_lists_exactly_what_the_model_saw() -> (
    None
):
    # Two leading paragraphs fill 900 characters; the deep answer is the page's fourth
    # paragraph, the passage the index ranks best. Speed used to cut each source to 900
    # characters in page order after the ranking: the snippet and the first paragraphs filled
    # them, the best passage was dropped and `sources[].passages` still listed it (#23).
    filler = [f"Harbour note {i}: " + "the quay has lamps and benches. " * 14 for i in range(3)]
    answer = "The harbour depth at the north quay is 12 metres at low tide."
    markdown = "\n\n".join([*filler, answer])
    for mode in ("balanced", "speed"):
        brain = ScriptedBrain(
            judgements=[Judgement(sufficiency="partial"), Judgement(sufficiency="sufficient")]
        )
        async with harness(brain=brain) as h:
            h.ranker.corpus.committed["local:/n/harbour.md"] = index_pb2.Document(
                id="local:/n/harbour.md", title="Harbour", markdown=markdown
            )
            events = await h.run("harbour depth north quay low tide", sources=("local",), mode=mode)
        seen = brain.answered[-1]
        assert seen[0].text.startswith(answer), mode
        listed = first(events, "sources").data["sources"]
        assert len(listed) == len(seen)
        for card, source in zip(listed, seen, strict=True):
            assert card["passages"] == list(source.passages), mode
            assert all(part in source.text for part in card["passages"]), mode
        assert sum(len(s.text) for s in seen) <= h.settings.evidence_budget_tokens() * 4


async def test_speed_still_cuts_a_chunk_to_its_per_source_size() -> None:
    brain = ScriptedBrain(judgements=[Judgement(sufficiency="sufficient")])
    async with harness(brain=brain, pages=PAGES, evidence="chunk_per_url") as h:
        h.searcher.default = hits(*URLS[:2], words="quarry")
        events = await h.run("What does Quarry do?", mode="speed")
    limit = PROFILES["speed"].source_chars or 0
    seen = brain.answered[-1]
    assert seen
    assert all(len(s.text) <= limit for s in seen)
    listed = first(events, "sources").data["sources"]
    assert [c["passages"] for c in listed] == [list(s.passages) for s in seen]


async def test_speed_gives_a_question_asking_two_things_more_evidence_than_one() -> None:
    # Half of speed's 900 tokens a part left the second answer out of the prompt; each part
    # now ranks passages for its share of 1.5x the budget (ModeProfile.parts_budget).
    async with harness() as h:
        for mode in ("speed", "balanced"):
            state = RunState("q", [], RunOptions(mode=mode), h.deps, EventSink(), Deadline(9))
            one = state.evidence_budget()
            state.parts = ["Which port does git daemon use?", "How is the newest stash named?"]
            grown = int(one * PROFILES[mode].parts_budget)
            assert state.evidence_budget() == min(grown, h.settings.evidence_budget_tokens())
    assert PROFILES["speed"].parts_budget > 1


async def test_speed_reads_more_pages_for_a_question_asking_two_things() -> None:
    # Each part gets its own ranked list and the lists are interleaved: with 6 pages the
    # second part's best page was often the seventh (ModeProfile.parts_top_urls).
    async with harness() as h:
        for mode in ("speed", "balanced"):
            state = RunState("q", [], RunOptions(mode=mode), h.deps, EventSink(), Deadline(9))
            one = state.top_urls
            state.parts = ["Which port does git daemon use?", "How is the newest stash named?"]
            assert state.top_urls == (PROFILES[mode].parts_top_urls or one)
    assert PROFILES["speed"].parts_top_urls == 8
    assert PROFILES["speed"].top_urls == 6
