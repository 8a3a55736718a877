"""Deep research through the real HTTP API (uvicorn), real reader and ranker servers, SQLite,
the scripted SearXNG and the scripted LLM: the whole run, resuming streams, restarts, cancel,
expiry, concurrency, the in-flight cap, and `quarry research` (a real SIGINT to a real CLI
process cancels the run on the server and prints the partial report)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from orchestrator.adapters.store.sqlite import SqliteStore
from orchestrator.core.research.state import ResearchState
from orchestrator.core.store import RunRecord, StoredEvent
from quarry_cli.main import main

from services.orchestrator.tests.fakes.fake_llm import Fail, Hang, Say
from services.orchestrator.tests.fakes.llm_script import Call, Reply
from services.orchestrator.tests.integration.research_support import (
    CITATION,
    DIMENSIONS,
    Ev,
    data,
    fakes,
    parse_sse,
    research_app,
    research_reply,
    serve,
    types,
)
from services.orchestrator.tests.integration.support import World, results_for, world
from services.orchestrator.tests.integration.test_mcp import _text as mcp_text
from services.orchestrator.tests.integration.test_mcp import http_session, stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


def _phases(events: list[Ev]) -> list[str]:
    return [e.data["phase"] for e in events if e.type == "phase.started"]


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
        assert _phases(events) == ["scope", "plan_review", "research", "evaluate", "synthesis"]
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
    assert "evaluate" not in _phases(events)


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
            assert _phases(after) == ["synthesis"]  # research is not done again
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


async def test_bad_requests_are_problems(world: World) -> None:
    async with research_app(world) as (api, _f):
        missing = await api.client.get(f"/v1/research/{'0' * 32}")
        assert missing.status_code == 404
        bad_mode = await api.client.post("/v1/research", json={"query": "x", "mode": "nope"})
        assert bad_mode.status_code == 422
        bad_id = await api.client.get("/v1/research/not-an-id/events")
        assert bad_id.status_code == 422
        run_id = await api.start()
        await api.events(run_id)
        bad_last = await api.client.get(
            f"/v1/research/{run_id}/events", headers={"Last-Event-ID": "x"}
        )
        assert bad_last.status_code == 400
        wrong_accept = await api.client.get(
            f"/v1/research/{run_id}/events", headers={"Accept": "application/json"}
        )
        assert wrong_accept.status_code == 406
        late = await api.client.post(f"/v1/research/{run_id}/continue", json={})
        assert late.status_code == 409
        for response in (missing, bad_mode, bad_id, bad_last, wrong_accept, late):
            assert response.headers["content-type"] == "application/problem+json"


async def test_numbers_past_their_bounds_are_problems_not_500s(world: World) -> None:
    # 2**63 overflowed SQLite's integers: GET /v1/research?offset=2**63 answered 500.
    huge = str(2**63)
    async with research_app(world) as (api, _f):
        run_id = await api.start()
        await api.events(run_id)
        refused = [
            await api.client.get("/v1/research", params={"offset": huge}),
            await api.client.get("/v1/research", params={"limit": huge}),
            await api.client.get("/v1/sessions", params={"offset": huge}),
            await api.client.get(f"/v1/research/{run_id}/events", params={"last_event_id": huge}),
        ]
        header = await api.client.get(
            f"/v1/research/{run_id}/events", headers={"Last-Event-ID": huge}
        )
        last_page = await api.client.get("/v1/research", params={"offset": 1_000_000})
    assert [r.status_code for r in refused] == [422] * 4
    assert header.status_code == 400
    for response in (*refused, header):
        assert response.headers["content-type"] == "application/problem+json"
    assert (last_page.status_code, last_page.json()["runs"]) == (200, [])


async def test_cli_writes_the_report_to_a_file(world: World, tmp_path: Path) -> None:
    out_file = tmp_path / "report.md"
    async with research_app(world, research_max_evaluations=0) as (api, _):
        argv = ["--url", api.base, "research", "how do tides work", "-o", str(out_file), "-q"]
        status = await asyncio.to_thread(main, argv, io.StringIO())
    assert status == 0
    report = out_file.read_text()
    assert report.startswith("# how do tides work")
    assert "## Contents" in report
    assert "## Sources" in report


async def test_ctrl_c_cancels_the_run_and_prints_the_partial_report(world: World) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, f):
        f.llm.queue("synthesis", Hang(after_tokens=3))
        code = "from quarry_cli.main import entrypoint; entrypoint()"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            code,
            "--url",
            api.base,
            "research",
            "how do tides work",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stderr is not None
        assert proc.stdout is not None
        lines: list[str] = []
        async with asyncio.timeout(60):
            while not any("phase: synthesis" in line for line in lines):
                line = (await proc.stderr.readline()).decode()
                assert line, "".join(lines)
                lines.append(line)
            await f.llm.wait_until(lambda: len(f.llm.calls_of("synthesis")) == 1, 10)
            proc.send_signal(signal.SIGINT)
            stdout, stderr = await proc.communicate()
        assert proc.returncode == 5, "".join(lines) + stderr.decode()
        assert stdout.decode().startswith("# how do tides work")
        run_id = next(x.split()[2] for x in lines if x.startswith("research run "))
        view = await api.show(run_id)
        assert view["status"] == "cancelled"
        assert view["phase"] == "synthesis"


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_the_mcp_research_tool_returns_the_report(world: World, transport: str) -> None:
    lines: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")

    opener = http_session if transport == "http" else stdio_session
    async with (
        research_app(world, research_max_evaluations=0) as (api, _),
        opener(api.base) as session,
    ):
        result = await session.call_tool(
            "research", {"query": "how do tides work"}, progress_callback=on_progress
        )
        listed = (await api.client.get("/v1/research")).json()
    assert not result.isError, mcp_text(result)
    report = mcp_text(result)
    assert report.startswith("# how do tides work")
    assert "## Sources" in report
    assert any(line.startswith("Finding on") for line in lines), lines
    assert listed["runs"][0]["status"] == "completed"


async def test_the_openai_quarry_research_model_answers_with_the_report(world: World) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, _):
        question = {"role": "user", "content": "how do tides work"}
        body = {"model": "quarry-research", "messages": [question]}
        whole = await api.client.post("/v1/chat/completions", json=body)
        streamed = await api.client.post("/v1/chat/completions", json={**body, "stream": True})
    assert whole.status_code == 200, whole.text
    completion = whole.json()
    content = completion["choices"][0]["message"]["content"]
    assert content.startswith("# how do tides work")
    assert "[^1]: [" in content
    assert completion["quarry"]["status"] == "completed"
    lines = [x.removeprefix("data: ") for x in streamed.text.splitlines() if x.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(x) for x in lines[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks]
    text = "".join(d.get("content", "") for d in deltas)
    assert text.startswith("# how do tides work")
    assert any("Finding on" in d.get("reasoning_content", "") for d in deltas)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


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
