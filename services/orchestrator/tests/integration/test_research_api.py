"""Deep research through the real HTTP API (uvicorn), real reader and ranker servers, SQLite,
the scripted SearXNG and the scripted LLM: the whole run and its phases, due diligence, and how
a run copes with a bad scope, empty dimensions, LLM failures and a spent search budget.
(Resuming, restarts and limits: test_research_resume.py; errors, the CLI, MCP and the
OpenAI-compatible model: test_research_faces.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from services.orchestrator.tests.fakes.fake_llm import Fail, Say
from services.orchestrator.tests.fakes.llm_script import Call, Reply
from services.orchestrator.tests.integration.research_support import (
    CITATION,
    DIMENSIONS,
    data,
    phases,
    research_app,
    research_reply,
    types,
)
from services.orchestrator.tests.integration.support import World, results_for, world

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


async def test_full_run_streams_every_phase_in_order_and_writes_a_cited_report(
    world: World, tmp_path: Path
) -> None:
    async with research_app(world, tmp_path) as (api, f):
        run_id = await api.start()
        events = await api.events(run_id)
        assert [e.id for e in events] == list(range(len(events)))
        assert events[0].type == "state"
        assert events[0].data["research_id"] == run_id
        assert events[-1].type == "research.completed"
        assert phases(events) == ["scope", "plan_review", "research", "evaluate", "synthesis"]
        order = types(events)
        for earlier, later in [
            ("scope.completed", "research.dimension"),
            ("research.dimension", "search.started"),
            ("search.started", "search.completed"),
            ("search.completed", "research.compressing"),
            ("research.compressing", "research.compressed"),
            ("research.compressed", "research.finding"),
            ("research.finding", "research.evaluation"),
            ("research.evaluation", "report.chunk"),
            ("report.chunk", "report.completed"),
            ("counters.update", "report.completed"),
        ]:
            assert order.index(earlier) < order.index(later), (earlier, later)
        findings = data(events, "research.finding")
        assert sorted(x["title"] for x in findings) == sorted(DIMENSIONS)
        assert {e["dimension"] for e in data(events, "search.started")} == {"d1", "d2", "d3"}
        done = data(events, "report.completed")[0]
        report = done["report"]
        numbers = {int(n) for n in CITATION.findall(report.split("## Sources")[0])}
        assert numbers, report
        assert numbers <= {s["n"] for s in done["sources"]}
        assert {s["url"] for s in done["sources"]} <= {
            f"{world.pages_url}/{t}" for t in ("tides", "moon", "spring", "neap")
        }
        assert "## Contents" in report
        assert "## Summary" in report
        for title in DIMENSIONS:
            assert f"## {title}" in report
        assert "".join(x["text"] for x in data(events, "report.chunk")).startswith("# how do")
        view = await api.show(run_id)
        assert view["status"] == "completed"
        assert view["report"] == report
        assert view["last_event_id"] == events[-1].id
        assert view["counters"]["searches"] == 3
        assert view["counters"]["llm_calls"] >= 9
        exported = await api.client.get(f"/v1/research/{run_id}/report.md")
        assert exported.status_code == 200
        assert exported.headers["content-type"].startswith("text/markdown")
        assert exported.text == report
        listed = (await api.client.get("/v1/research")).json()
        assert [r["research_id"] for r in listed["runs"]] == [run_id]
        # the scripted LLM saw each section's sources under the run's numbers
        assert all(c.sources for c in f.llm.calls_of("synthesis"))


async def test_due_diligence_writes_validation_risks_and_recommendations(world: World) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, f):
        run_id = await api.start("should we adopt tidal power", mode="due-diligence")
        events = await api.events(run_id)
    report = data(events, "report.completed")[0]["report"]
    for title in ("Validation", "Risks", "Recommendations"):
        assert f"## {title}" in report
    scope = [c for c in f.llm.calls if "dimensions" in (c.schema or {}).get("properties", {})]
    assert "due-diligence" in scope[0].prompt
    assert "evaluate" not in phases(events)


async def test_invalid_scope_falls_back_to_the_query_with_a_warning(world: World) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, f):
        f.llm.queue("other", Say("not json"), Say("still not json"))
        run_id = await api.start("tidal bores")
        events = await api.events(run_id)
    scope = data(events, "scope.completed")[0]
    assert scope["used_default"] is True
    assert [d["title"] for d in scope["dimensions"]] == ["tidal bores"]
    assert "llm_invalid_output" in [w["code"] for w in data(events, "warning")]
    assert events[-1].type == "research.completed"


async def test_a_dimension_that_finds_nothing_searches_the_request_as_typed(
    world: World,
) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, f):
        f.searx.results = results_for(world, {"zzz nothing": []})
        scope = Say.json({"brief": "b", "dimensions": ["zzz nothing"]})
        f.llm.queue("other", scope)
        run_id = await api.start("how do tides work")
        events = await api.events(run_id)
    assert f.searx.queries[:2] == ["zzz nothing", "how do tides work"]
    assert data(events, "research.finding")[0]["sources"]


async def test_llm_failures_after_research_still_give_a_report_from_the_findings(
    world: World,
) -> None:
    def script(call: Call) -> Reply | None:
        if "coverage" in (call.schema or {}).get("properties", {}):
            return Fail(500, "evaluation crashed")
        return research_reply(call)

    async with research_app(world) as (api, f):
        f.llm.script = script
        f.llm.queue("synthesis", Fail(500, "writer crashed"), Fail(500, "writer crashed"))
        run_id = await api.start()
        events = await api.events(run_id)
    assert events[-1].type == "research.completed"
    warnings = [w["message"] for w in data(events, "warning") if w["code"] == "llm_unavailable"]
    assert any("coverage check" in w for w in warnings)
    assert any("Writing a section" in w for w in warnings)
    report = data(events, "report.completed")[0]["report"]
    summary = report.split("## Summary\n")[1].split("\n## ")[0]
    findings = data(events, "research.finding")
    assert findings[0]["key_finding"].split("[")[0].strip() in summary


async def test_the_search_budget_stops_research_and_the_report_is_still_written(
    world: World,
) -> None:
    async with research_app(world, research_max_searches=2, research_max_evaluations=0) as (
        api,
        f,
    ):
        run_id = await api.start()
        events = await api.events(run_id)
    assert len(f.searx.queries) == 2
    assert "budget_exhausted" in [w["code"] for w in data(events, "warning")]
    assert len(data(events, "research.finding")) == 3  # every dimension still reports
    assert events[-1].type == "research.completed"
    assert events[-1].data["searches"] == 2


async def test_completed_report_gives_a_chat_session_its_compacted_context(world: World) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, f):
        run_id = await api.start(session_id="chat-1")
        await api.events(run_id)
        session = (await api.client.get("/v1/sessions/chat-1")).json()
        turn = session["turns"][-1]
        assert turn["question"] == "how do tides work"
        assert "Key findings:" in turn["answer"]
        assert "## Contents" not in turn["answer"]  # not the raw report
        assert turn["sources"]
        # a follow-up research run in the session starts a new run whose scope sees the gist
        second = await api.start("and in lakes?", session_id="chat-1")
        assert second != run_id
        await api.events(second)
        scopes = [c for c in f.llm.calls if "dimensions" in (c.schema or {}).get("properties", {})]
        assert "Key findings:" in scopes[-1].prompt


async def test_a_question_of_the_longest_accepted_length_is_researched(world: World) -> None:
    # 2,000 characters (ResearchRequest's bound) with no valid scope from the model: the
    # fallback scope is the question cut to what a dimension may hold, not a failed run.
    question = ("why do the tides of the Bay of Fundy rise so high " * 50)[:2000].strip()
    async with research_app(world, research_max_evaluations=0) as (api, f):
        f.llm.queue("other", Say("not json"), Say("still not json"))
        run_id = await api.start(question)
        events = await api.events(run_id)
    (dimension,) = data(events, "scope.completed")[0]["dimensions"]
    assert question.startswith(dimension["title"])
    assert events[-1].type == "research.completed"
