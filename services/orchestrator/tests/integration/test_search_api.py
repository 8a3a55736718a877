"""Every branch of the loop through the real HTTP API and the production wiring: real reader and
ranker servers, a local HTTP server for pages, the scripted SearXNG and the scripted LLM."""

from __future__ import annotations

import pytest

from services.orchestrator.tests.fakes.fake_llm import Say
from services.orchestrator.tests.integration.support import (
    TOPICS,
    World,
    codes,
    judge,
    of,
    results_for,
    stack,
    status,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


async def test_chunks_sufficient_reads_real_pages_and_cites_them(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        events = await s.ask()
    assert status(events) == "answered"
    assert {r["status"] for r in of(events, "read.completed")} == {"OK"}
    assert of(events, "chunks.ranked")[0]["pages"] == 4
    sources = of(events, "sources")[0]["sources"]
    assert {src["url"] for src in sources} == {f"{world.pages_url}/{t}" for t in TOPICS}
    completed = of(events, "answer.completed")[0]
    assert completed["cited"]
    assert set(completed["cited"]) <= {src["n"] for src in sources}
    assert codes(events) == []
    synthesis = s.llm.calls_of("synthesis")[0]
    assert "gravitational pull" in synthesis.prompt


async def test_snippets_sufficient_answers_without_reading(world: World) -> None:
    async with stack(world, prefetch=False) as s:
        events = await s.ask()
    assert status(events) == "answered"
    assert of(events, "read.started") == []
    assert of(events, "judge")[0]["stage"] == "snippets"


async def test_clarify(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue(
            "plan",
            Say.json(
                {
                    "history_sufficiency": "insufficient",
                    "action": "clarify",
                    "clarifying_question": "Which tides: ocean or Earth tides?",
                    "optimized_query": None,
                }
            ),
        )
        # A pronoun beside other words: the prefilter leaves it to the model (a bare topic
        # such as "tides?" is searched as asked, whatever the model says).
        events = await s.ask("Are they stronger near the coast?")
    assert of(events, "clarify") == [{"question": "Which tides: ocean or Earth tides?"}]
    assert status(events) == "clarify"
    assert s.searx.queries == []


async def test_follow_up_answered_from_history(world: World) -> None:
    async with stack(world, prefetch=False) as s:
        first = await s.ask(session_id="conv")
        s.llm.queue(
            "plan",
            Say.json(
                {
                    "history_sufficiency": "sufficient",
                    "action": "proceed",
                    "clarifying_question": None,
                    "optimized_query": "tides",
                }
            ),
        )
        second = await s.ask("so what pulls the oceans?", session_id="conv")
        session = (await s.client.get("/v1/sessions/conv")).json()
    assert status(first) == "answered"
    assert status(second) == "from_history"
    assert len(s.searx.queries) == 1
    assert of(second, "sources")[0]["sources"] == of(first, "sources")[0]["sources"]
    assert [t["status"] for t in session["turns"]] == ["answered", "from_history"]
    plan_prompt = s.llm.calls_of("plan")[1].prompt
    assert "what causes tides" in plan_prompt


async def test_gap_loop_searches_the_gaps(world: World) -> None:
    async with stack(world) as s:
        s.searx.results = results_for(
            world,
            {
                "what causes tides": ["tides", "moon"],
                "spring tides": ["spring"],
                "neap tides": ["neap"],
            },
        )
        s.llm.queue(
            "judge",
            judge("insufficient"),
            judge("partial", ["spring tides", "neap tides"]),
            judge("insufficient"),
            judge("sufficient"),
        )
        events = await s.ask()
    assert s.searx.queries == ["what causes tides", "spring tides", "neap tides"]
    reads = [r["url"] for r in of(events, "read.completed")]
    assert sorted(reads) == sorted(f"{world.pages_url}/{t}" for t in TOPICS)
    done = events[-1]["data"]
    assert (done["status"], done["rounds"], done["pages_read"]) == ("answered", 2, 4)


async def test_exhaustion_answers_with_a_search_limit_warning(world: World) -> None:
    async with stack(world, max_rounds=2) as s:
        s.searx.results = results_for(
            world, {"what causes tides": ["tides"], "moon gravity": ["moon"]}
        )
        s.llm.queue("judge", *[judge("insufficient", ["moon gravity"])] * 4)
        events = await s.ask()
    assert status(events) == "answered"
    assert "search_limit" in codes(events)
    assert events[-1]["data"]["rounds"] == 2
    assert of(events, "error") == []


async def test_invalid_json_is_retried_then_defaulted(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue("judge", Say("not json at all"), Say("{still not json"), judge("sufficient"))
        events = await s.ask()
    verdicts = of(events, "judge")
    assert verdicts[0]["used_default"] is True
    assert verdicts[0]["verdict"] == "insufficient"
    assert "llm_invalid_output" in codes(events)
    assert status(events) == "answered"


async def test_a_question_of_the_longest_accepted_length_is_answered(world: World) -> None:
    # 2,000 characters (SearchRequest's bound): the loop's plan carries it as the search query
    # when the model writes none (here: no valid plan at all).
    question = ("what causes the tides along the coast " * 60)[:2000].strip()
    async with stack(world) as s:
        s.llm.queue("plan", Say("not json"), Say("still not json"))
        events = await s.ask(question)
    assert status(events) == "answered"
    assert s.searx.queries[0] == question
