"""Deep-research integration tests: the app served by uvicorn on 127.0.0.1 (SSE streams for
real), over the shared world (real reader and ranker, local pages), the scripted SearXNG and a
scripted LLM that also answers the research calls (scope, compress, evaluate)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from orchestrator.app import create_app
from orchestrator.config import Settings

from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Say
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
from services.orchestrator.tests.fakes.llm_script import Call, Reply, synthesis_from_sources
from services.orchestrator.tests.integration.support import World, results_for, until

DIMENSIONS = ["what causes tides", "spring tides", "neap tides"]
CITATION = re.compile(r"\[(\d+)\]")


def research_reply(call: Call) -> Reply | None:
    """Valid answers to the research calls (the fake's default covers judge and synthesis)."""
    props = set((call.schema or {}).get("properties", {}))
    if "dimensions" in props:
        return Say.json({"brief": "How tides work.", "dimensions": DIMENSIONS})
    if "key_finding" in props:
        text = synthesis_from_sources(call.sources, limit=2)
        return Say.json({"summary": text, "key_finding": text.split(". ")[0]})
    if "coverage" in props:
        return Say.json({"reasoning": "Covered.", "coverage": "complete", "new_dimensions": []})
    return None


@dataclass(frozen=True)
class Ev:
    """One SSE event."""

    id: int
    type: str
    data: dict[str, Any]


def parse_sse(text: str) -> tuple[list[Ev], int]:
    """Events and heartbeat comments in an SSE body."""
    events, beats = [], 0
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                beats += 1
            elif ": " in line:
                key, value = line.split(": ", 1)
                fields[key] = value
        if "id" in fields:
            events.append(Ev(int(fields["id"]), fields["event"], json.loads(fields["data"])))
    return events, beats


@dataclass
class Api:
    """A served app and a client for it."""

    base: str
    client: httpx.AsyncClient
    app: FastAPI

    async def start(self, query: str = "how do tides work", **body: Any) -> str:
        reply = await self.client.post("/v1/research", json={"query": query, **body})
        assert reply.status_code == 202, reply.text
        return str(reply.json()["research_id"])

    async def events(self, run_id: str, after: int | None = None) -> list[Ev]:
        """Follow the stream to its end."""
        headers = {} if after is None else {"Last-Event-ID": str(after)}
        reply = await self.client.get(f"/v1/research/{run_id}/events", headers=headers)
        assert reply.status_code == 200, reply.text
        assert reply.headers["content-type"].startswith("text/event-stream")
        return parse_sse(reply.text)[0]

    async def events_until(self, run_id: str, stop: str, after: int | None = None) -> list[Ev]:
        """Follow the stream until an event of type ``stop``, then hang up."""
        headers = {} if after is None else {"Last-Event-ID": str(after)}
        seen: list[Ev] = []
        buffer = ""
        async with self.client.stream(
            "GET", f"/v1/research/{run_id}/events", headers=headers
        ) as reply:
            async for chunk in reply.aiter_text():
                buffer += chunk
                while "\n\n" in buffer:
                    block, buffer = buffer.split("\n\n", 1)
                    seen += parse_sse(block + "\n\n")[0]
                    if seen and seen[-1].type == stop:
                        return seen
        raise AssertionError(f"the stream ended without {stop}: {[e.type for e in seen]}")

    async def show(self, run_id: str) -> dict[str, Any]:
        reply = await self.client.get(f"/v1/research/{run_id}")
        assert reply.status_code == 200, reply.text
        return dict(reply.json())


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[Api]:
    """``app`` (lifespan included) on uvicorn, 127.0.0.1, a free port; stopped on exit."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="on")
    )
    task = asyncio.create_task(server.serve())
    try:
        await until(lambda: bool(server.started and server.servers) or task.done(), 20)
        assert not task.done(), "uvicorn did not start"
        base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            yield Api(base, client, app)
    finally:
        server.should_exit = True
        await task


@dataclass
class Fakes:
    """The scripted LLM and SearXNG of one test."""

    llm: FakeLLM
    searx: FakeSearxng
    settings: dict[str, Any] = field(default_factory=dict)

    def app(self, **overrides: Any) -> FastAPI:
        return create_app(Settings(**{**self.settings, **overrides}))


@asynccontextmanager
async def fakes(
    world: World, data_dir: Path | None = None, **settings: Any
) -> AsyncIterator[Fakes]:
    """The scripted LLM and SearXNG, and the settings of an app over them and ``world``."""
    async with AsyncExitStack() as es:
        llm = await es.enter_async_context(FakeLLM(script=research_reply))
        searx = await es.enter_async_context(FakeSearxng(results_for(world)))
        config: dict[str, Any] = {
            "reader_addr": world.reader_addr,
            "ranker_addr": world.ranker_addr,
            "searxng_url": searx.url,
            "llm_provider": "ollama",
            "llm_base_url": llm.url,
            "llm_model": llm.model,
            "read_retry_delay_s": 0.05,
            "synthesis_reserve_s": 1.0,
            "research_review_delay_s": 0.0,
            "data_dir": str(data_dir) if data_dir else "",
            **settings,
        }
        yield Fakes(llm, searx, config)


@asynccontextmanager
async def research_app(
    world: World, data_dir: Path | None = None, **settings: Any
) -> AsyncIterator[tuple[Api, Fakes]]:
    """One served app over fresh fakes."""
    async with fakes(world, data_dir, **settings) as f, serve(f.app()) as api:
        yield api, f


def types(events: list[Ev]) -> list[str]:
    """Event types in order."""
    return [e.type for e in events]


def phases(events: list[Ev]) -> list[str]:
    """The phases started, in order."""
    return [e.data["phase"] for e in events if e.type == "phase.started"]


def data(events: list[Ev], type_: str) -> list[dict[str, Any]]:
    """The data of every event of ``type_``."""
    return [e.data for e in events if e.type == type_]
