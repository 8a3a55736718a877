"""A client that goes away cancels its run: reads and the answer stream stop, no task is left."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

import httpx
import uvicorn
from fastapi import FastAPI
from orchestrator.core.schemas import Judgement

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import harness
from services.orchestrator.tests.unit.test_api import app_for

URLS = [f"http://site{i}.test/" for i in range(6)]
PAGES = dict.fromkeys(URLS, ("T", "Quarry is an answer engine."))
RUN_TASKS = ("produce", "_read_one", "run_question", "_watch")


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1, port 0, in this event loop."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="on")
    )
    task = asyncio.create_task(server.serve())
    try:
        assert await until(lambda: server.started, 10.0), "uvicorn did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


def run_tasks() -> list[asyncio.Task[object]]:
    """Tasks that belong to a run (none may outlive its client)."""
    return [t for t in asyncio.all_tasks() if any(n in repr(t.get_coro()) for n in RUN_TASKS)]


async def until(check: Callable[[], bool], within: float) -> bool:
    """Poll ``check`` for up to ``within`` seconds."""
    end = asyncio.get_running_loop().time() + within
    while not check():
        if asyncio.get_running_loop().time() > end:
            return False
        await asyncio.sleep(0.02)
    return True


async def stream_until(base: str, marker: str, ready: Callable[[], bool] = lambda: True) -> None:
    """POST a question, read until ``marker`` appears and ``ready()``, then drop the connection."""
    async with (
        httpx.AsyncClient(base_url=base, timeout=10) as c,
        c.stream(
            "POST", "/v1/search", json={"query": "q"}, headers={"Accept": "text/event-stream"}
        ) as reply,
    ):
        async for line in reply.aiter_lines():
            if marker in line:
                assert await until(ready, 5.0)
                break


async def test_disconnect_during_reads_cancels_the_grpc_calls() -> None:
    searcher = ScriptedSearcher(default=hits(*URLS))
    async with (
        harness(pages=PAGES, reader_delay=30.0, searcher=searcher) as h,
        serve(app_for(h)) as base,
    ):
        await stream_until(base, "read.started", lambda: h.reader.inflight == 5)
        assert await until(lambda: h.reader.inflight == 0 and not run_tasks(), 1.0)
        assert h.reader.cancelled == 5


async def test_disconnect_during_the_answer_closes_the_llm_stream() -> None:
    brain = ScriptedBrain(
        judgements=[Judgement(sufficiency="sufficient")],
        answer_text=" ".join(["word"] * 500),
        token_delay=0.05,
    )
    async with (
        harness(brain=brain, searcher=ScriptedSearcher(default=hits(*URLS))) as h,
        serve(app_for(h)) as base,
    ):
        await stream_until(base, "answer.delta")
        assert await until(lambda: brain.inflight == 0 and not run_tasks(), 1.0)


async def test_disconnect_while_waiting_for_json_cancels_the_run() -> None:
    searcher = ScriptedSearcher(default=hits(*URLS))
    async with (
        harness(pages=PAGES, reader_delay=30.0, searcher=searcher) as h,
        serve(app_for(h)) as base,
    ):
        async with httpx.AsyncClient(base_url=base, timeout=1.0) as c:
            with suppress(httpx.ReadTimeout):
                await c.post(
                    "/v1/search", json={"query": "q"}, headers={"Accept": "application/json"}
                )
        assert len(h.reader.calls) == 5, "the run never reached the reader"
        assert await until(lambda: h.reader.inflight == 0 and not run_tasks(), 1.0)
