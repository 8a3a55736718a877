"""Deep research that outlives its connection and its process, through the real HTTP API, real
reader and ranker servers, SQLite, the scripted SearXNG and the scripted LLM: resuming streams,
restarts, crashes, heartbeats, cancel, expiry, concurrency, the in-flight cap and the rate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from orchestrator.adapters.store.sqlite import SqliteStore
from orchestrator.core.research.state import ResearchState
from orchestrator.core.store import RunRecord, StoredEvent

from services.orchestrator.tests.fakes.fake_llm import Hang, Say
from services.orchestrator.tests.integration.research_support import (
    data,
    fakes,
    parse_sse,
    phases,
    research_app,
    serve,
    types,
)
from services.orchestrator.tests.integration.support import World, world

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


async def test_disconnect_and_resume_by_last_event_id_has_no_gap_and_no_duplicate(
    world: World, tmp_path: Path
) -> None:
    async with research_app(world, tmp_path) as (api, f):
        f.llm.token_delay = 0.02  # the report streams for a while
        run_id = await api.start()
        first = await api.events_until(run_id, "research.finding")
        rest = await api.events(run_id, after=first[-1].id)
        whole = await api.events(run_id)
    ids = [e.id for e in first + rest]
    assert ids == list(range(len(ids)))
    assert [(e.id, e.type, e.data) for e in first + rest] == [(e.id, e.type, e.data) for e in whole]
    assert rest[-1].type == "research.completed"


async def test_restart_mid_run_marks_interrupted_then_resume_completes(
    world: World, tmp_path: Path
) -> None:
    async with fakes(world, tmp_path) as f:
        f.llm.queue("synthesis", Hang())
        async with serve(f.app()) as api:
            run_id = await api.start()
            seen = await api.events_until(run_id, "report.chunk")
        # a new app (a restarted orchestrator) over the same database
        async with serve(f.app()) as api:
            missed = await api.events(run_id, after=seen[-1].id)
            assert missed[-1].type == "state"
            assert missed[-1].data["status"] == "interrupted"
            assert [e.id for e in missed] == list(range(seen[-1].id + 1, missed[-1].id + 1))
            view = await api.show(run_id)
            assert view["status"] == "interrupted"
            assert view["completed_phase"] == "evaluate"
            assert len(view["findings"]) == 3
            reply = await api.client.post(f"/v1/research/{run_id}/resume", json={})
            assert reply.status_code == 202, reply.text
            after = await api.events(run_id, after=missed[-1].id)
            assert after[0].id == missed[-1].id + 1
            assert after[-1].type == "research.completed"
            assert phases(after) == ["synthesis"]  # research is not done again
            whole = await api.events(run_id)
            assert [e.id for e in whole] == list(range(len(whole)))
            assert (await api.show(run_id))["status"] == "completed"
            again = await api.client.post(f"/v1/research/{run_id}/resume", json={})
            assert again.status_code == 409
            assert again.headers["content-type"] == "application/problem+json"


async def test_a_run_left_running_by_a_crash_is_interrupted_at_start_and_resumes(
    world: World, tmp_path: Path
) -> None:
    store = await SqliteStore.open(str(tmp_path))
    run_id = "c" * 32
    record = RunRecord(
        run_id,
        "how do tides work",
        "deep-research",
        "running",
        "research",
        None,
        ResearchState().model_dump(mode="json"),
        1.0,
        1.0,
    )
    await store.create_run(record)
    await store.save(record, [StoredEvent(0, "state", {"status": "running", "phase": None})])
    await store.close()
    async with research_app(world, tmp_path) as (api, _):
        events = await api.events(run_id)
        assert types(events) == ["state", "state"]
        assert events[1].data == {"status": "interrupted", "phase": "research"}
        assert (await api.client.post(f"/v1/research/{run_id}/resume", json={})).status_code == 202
        resumed = await api.events(run_id, after=1)
    assert resumed[0].id == 2
    assert resumed[-1].type == "research.completed"


async def test_an_idle_stream_sends_heartbeat_comments(world: World) -> None:
    async with research_app(world, research_review_delay_s=0.5, research_heartbeat_s=0.05) as (
        api,
        _,
    ):
        run_id = await api.start()
        reply = await api.client.get(f"/v1/research/{run_id}/events")
    events, beats = parse_sse(reply.text)
    assert beats > 0
    assert events[-1].type == "research.completed"


async def test_delete_mid_synthesis_cancels_and_keeps_the_partial_report(world: World) -> None:
    async with research_app(world) as (api, f):
        f.llm.queue("synthesis", Say("Tides rise and fall twice a day", tokens=None))
        f.llm.queue("synthesis", Hang(after_tokens=2))
        run_id = await api.start()
        await api.events_until(run_id, "report.chunk")
        await f.llm.wait_until(lambda: len(f.llm.calls_of("synthesis")) == 2, 10)
        reply = await api.client.delete(f"/v1/research/{run_id}")
        assert reply.status_code == 200, reply.text
        view = reply.json()
        assert view["status"] == "cancelled"
        assert view["phase"] == "synthesis"
        assert "Tides rise and fall twice a day" in view["report"]
        assert len(view["findings"]) == 3
        events = await api.events(run_id)
        assert events[-1].type == "research.cancelled"
        assert events[-1].data == {"phase": "synthesis"}
        assert "report.completed" not in types(events)
        assert "Tides rise" in (await api.client.get(f"/v1/research/{run_id}/report.md")).text
        await f.llm.wait_until(lambda: f.llm.in_flight == 0, 5)
        again = await api.client.delete(f"/v1/research/{run_id}")
        assert again.status_code == 409


async def test_finished_runs_expire_after_the_ttl(world: World, tmp_path: Path) -> None:
    async with research_app(world, tmp_path, research_ttl_s=0.5) as (api, _f):
        run_id = await api.start()
        await api.events(run_id)
        assert (await api.client.get(f"/v1/research/{run_id}")).status_code == 200
        manager = api.app.state.research

        async def total() -> int:
            return int((await manager.store.list_runs(10, 0))[1])

        async with asyncio.timeout(10):  # the sweeper runs every ttl / 2
            while await total():  # noqa: ASYNC110 - the sweeper offers no event to await
                await asyncio.sleep(0.05)
        gone = await api.client.get(f"/v1/research/{run_id}")
        assert gone.status_code == 404
        assert gone.headers["content-type"] == "application/problem+json"


async def test_two_runs_at_once_each_complete_with_their_own_events(world: World) -> None:
    async with research_app(world, research_max_inflight=2) as (api, _f):
        first = await api.start("how do tides work")
        second = await api.start("what are neap tides", mode="due-diligence")
        one, two = await api.events(first), await api.events(second)
    for run_id, events in ((first, one), (second, two)):
        assert events[0].data["research_id"] == run_id
        assert [e.id for e in events] == list(range(len(events)))
        assert events[-1].type == "research.completed"
    assert "## Risks" in data(two, "report.completed")[0]["report"]
    assert "## Risks" not in data(one, "report.completed")[0]["report"]


async def test_the_cap_on_runs_in_flight_answers_429_with_retry_after(world: World) -> None:
    async with research_app(world, research_max_inflight=1, research_review_delay_s=300) as (
        api,
        _f,
    ):
        first = await api.start()
        refused = await api.client.post("/v1/research", json={"query": "another"})
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 0
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["status"] == 429
        # the same cap through the OpenAI-compatible route says when to retry too
        chat = await api.client.post(
            "/v1/chat/completions",
            json={"model": "quarry-research", "messages": [{"role": "user", "content": "more"}]},
        )
        assert chat.status_code == 429
        assert int(chat.headers["retry-after"]) > 0
        assert chat.json()["error"]["code"] == "rate_limit_exceeded"
        # the plan review waits; continuing with edited dimensions goes on at once
        await api.events_until(first, "scope.completed")
        reply = await api.client.post(
            f"/v1/research/{first}/continue", json={"dimensions": ["neap tides"]}
        )
        assert reply.status_code == 200, reply.text
        events = await api.events(first)
        assert [x["title"] for x in data(events, "research.finding")] == ["neap tides"]
        assert (await api.client.post("/v1/research", json={"query": "now"})).status_code == 202


async def test_the_research_rate_answers_429_with_retry_after(world: World) -> None:
    async with research_app(world, rate_research="1/minute", research_review_delay_s=300) as (
        api,
        _f,
    ):
        await api.start()
        refused = await api.client.post("/v1/research", json={"query": "another"})
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["content-type"] == "application/problem+json"
