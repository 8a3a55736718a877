"""Deep research through each face, over the real HTTP API, real reader and ranker servers,
SQLite, the scripted SearXNG and the scripted LLM: bad requests as problems, `quarry research`
(a real SIGINT to a real CLI process cancels the run on the server and prints the partial
report), the MCP research tool and the OpenAI-compatible quarry-research model."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from quarry_cli.main import main

from services.orchestrator.tests.fakes.fake_llm import Hang
from services.orchestrator.tests.integration.research_support import (
    research_app,
)
from services.orchestrator.tests.integration.support import World, world
from services.orchestrator.tests.integration.test_mcp import _text as mcp_text
from services.orchestrator.tests.integration.test_mcp import http_session, stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


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
