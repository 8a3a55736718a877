"""An SSE stream with nothing to say sends `: keep-alive` comments (uvicorn on 127.0.0.1), so
proxies that cut idle streams keep it open while a CPU model thinks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from orchestrator.api.http.server import server_config
from orchestrator.core.schemas import Judgement

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import harness
from services.orchestrator.tests.unit.test_api import PAGES, URLS, app_for
from services.orchestrator.tests.unit.test_disconnect import until


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[str]:
    """``app`` under the production server configuration, on 127.0.0.1, port 0."""
    settings = app.state.settings
    server = uvicorn.Server(server_config(app, settings))
    task = asyncio.create_task(server.serve())
    try:
        assert await until(lambda: server.started, 10.0), "uvicorn did not start"
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await task


async def _stream(judge_delay: float, **settings: float) -> list[str]:
    """Ask a question whose snippet judge takes ``judge_delay`` s; the SSE lines, in order."""
    brain = ScriptedBrain(judgements=[Judgement(sufficiency="sufficient")], judge_delay=judge_delay)
    searcher = ScriptedSearcher(default=hits(*URLS, words="quarry"))
    budget: dict[str, Any] = {
        "question_budget_s": judge_delay + 30,
        "prefetch": False,
        "port": 0,
        **settings,
    }
    async with harness(pages=PAGES, brain=brain, searcher=searcher, **budget) as h:
        app = app_for(h)
        app.state.settings = h.settings
        async with (
            serve(app) as base,
            httpx.AsyncClient(base_url=base, timeout=judge_delay + 30) as c,
            c.stream("POST", "/v1/search", json={"query": "what is quarry"}) as reply,
        ):
            assert reply.status_code == 200
            return [line async for line in reply.aiter_lines()]


async def test_an_idle_stream_gets_keep_alive_comments() -> None:
    lines = await _stream(judge_delay=3.5, keepalive_s=1.0)
    alive = [i for i, line in enumerate(lines) if line == ": keep-alive"]
    assert len(alive) >= 2
    events = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    assert events[0] == "run.started"
    assert events[-1] == "run.completed"
    # They come while the judge thinks: after the search, before the judgement.
    judge = lines.index("event: judge")
    assert lines.index("event: search.completed") < alive[0]
    assert alive[-1] < judge


async def test_a_stream_idle_for_20_s_receives_a_keep_alive_at_the_default_interval() -> None:
    lines = await _stream(judge_delay=20.0)
    # At 15 s into the judge's 20 s of silence (another only if the machine stalls elsewhere).
    assert ": keep-alive" in lines
    assert lines.index(": keep-alive") < lines.index("event: judge")
    assert "event: run.completed" in lines
