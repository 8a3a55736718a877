"""Shared by the orchestrator's integration tests: a module-scoped world (a local page server,
real reader, ranker and index servers) and, per test, the scripted SearXNG and LLM plus the app with
its production wiring."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest_asyncio
from fastapi import FastAPI
from index.config import Settings as IndexSettings
from index.server import build_server as build_index
from orchestrator.app import create_app
from orchestrator.config import Settings
from quarry_common.grpc_server import GrpcServer
from ranker.config import Settings as RankerSettings
from ranker.server import build_server as build_ranker
from reader.config import Settings as ReaderSettings
from reader.server import build_server as build_reader

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Say
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result

TOPICS = {
    "tides": "Tides are caused by the gravitational pull of the Moon and the Sun on the oceans.",
    "moon": "The Moon orbits the Earth every 27.3 days and its gravity raises two tidal bulges.",
    "spring": "Spring tides happen when the Sun and the Moon line up, at new and full moon.",
    "neap": "Neap tides happen when the Sun and the Moon are at right angles to each other.",
}


@dataclass
class World:
    """Servers shared by the module: pages, reader, ranker, index."""

    pages_url: str
    reader_addr: str
    ranker_addr: str
    index_addr: str
    # Every path the page server was asked for: what the reader fetched, in order.
    page_requests: list[str] = field(default_factory=list)


def page_html(topic: str) -> bytes:
    """An article page Trafilatura extracts."""
    para = TOPICS[topic]
    body = "".join(f"<p>{para} Paragraph {i} adds detail about {topic}.</p>" for i in range(6))
    return (
        f"<html><head><title>All about {topic}</title></head><body><article>"
        f"<h1>All about {topic}</h1>{body}</article></body></html>"
    ).encode()


async def serve_pages(request: Request) -> Response:
    topic = request.path.strip("/")
    if topic not in TOPICS:
        return Response(404, b"not found", "text/plain")
    return Response(200, page_html(topic), "text/html; charset=utf-8")


@asynccontextmanager
async def serve_world(index: GrpcServer | None = None) -> AsyncIterator[World]:
    """The fixture pages, a real reader, ranker and ``index`` (default: an in-memory one),
    running until the block ends."""
    requested: list[str] = []

    async def serve_and_count(request: Request) -> Response:
        requested.append(request.path)
        return await serve_pages(request)

    pages = TinyHTTPServer(serve_and_count)
    await pages.start()
    reader = build_reader(ReaderSettings(port=0, allow_private_networks=True, workers=1))
    ranker = build_ranker(RankerSettings(port=0))
    index = index or build_index(IndexSettings(port=0))
    try:
        reader_port = await reader.start()
        ranker_port = await ranker.start()
        index_port = await index.start()
        yield World(
            pages.url,
            f"127.0.0.1:{reader_port}",
            f"127.0.0.1:{ranker_port}",
            f"127.0.0.1:{index_port}",
            requested,
        )
    finally:
        await reader.stop(0)
        await ranker.stop(0)
        await index.stop(0)
        await pages.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def world() -> AsyncIterator[World]:
    async with serve_world() as running:
        yield running


def results_for(
    world: World, routes: dict[str, list[str]] | None = None
) -> Callable[[str], list[dict[str, Any]]]:
    """SearXNG results: the topics ``routes`` names for a query, else all four pages."""

    def results(query: str) -> list[dict[str, Any]]:
        topics = (routes or {}).get(query, list(TOPICS))
        return [
            searx_result(f"{world.pages_url}/{t}", f"All about {t}", TOPICS[t][:80]) for t in topics
        ]

    return results


@dataclass
class Stack:
    """One orchestrator over the shared world and fresh fakes."""

    client: httpx.AsyncClient
    llm: FakeLLM
    searx: FakeSearxng
    app: FastAPI

    async def ask(self, query: str = "what causes tides", **body: Any) -> list[dict[str, Any]]:
        """POST over NDJSON; return the events."""
        reply = await self.client.post(
            "/v1/search",
            json={"query": query, **body},
            headers={"Accept": "application/x-ndjson"},
        )
        assert reply.status_code == 200, reply.text
        return [json.loads(line) for line in reply.text.splitlines()]


def stack_settings(world: World, llm: FakeLLM, searx: FakeSearxng, **settings: Any) -> Settings:
    """The production settings over ``world`` and the scripted LLM and SearXNG (``settings``
    override any of them)."""
    config: dict[str, Any] = {
        "reader_addr": world.reader_addr,
        "ranker_addr": world.ranker_addr,
        "index_addr": world.index_addr,
        "searxng_url": searx.url,
        "llm_provider": "ollama",
        "llm_base_url": llm.url,
        "llm_model": llm.model,
        "read_retry_delay_s": 0.05,
        "synthesis_reserve_s": 1.0,
        # Tests ask faster than a person; the rate-limit tests set their own limits.
        "rate_questions": "600/minute",
        "rate_indexing": "600/minute",
        **settings,
    }
    return Settings(**config)


@asynccontextmanager
async def stack(world: World, **settings: Any) -> AsyncIterator[Stack]:
    """Fakes plus the app with its production wiring, over ASGI."""
    async with AsyncExitStack() as es:
        llm = await es.enter_async_context(FakeLLM())
        searx = await es.enter_async_context(FakeSearxng(results_for(world)))
        app: FastAPI = create_app(stack_settings(world, llm, searx, **settings))
        await es.enter_async_context(app.router.lifespan_context(app))
        transport = httpx.ASGITransport(app=app)
        client = await es.enter_async_context(
            httpx.AsyncClient(transport=transport, base_url="http://localhost", timeout=30)
        )
        yield Stack(client, llm, searx, app)


@asynccontextmanager
async def serve_production(settings: Settings) -> AsyncIterator[str]:
    """The app as ``python -m orchestrator`` serves it (uvicorn with server_config's guarded
    protocol and bounds, the app's own lifespan) on 127.0.0.1, port 0; yields its URL."""
    import uvicorn
    from orchestrator.api.http.server import server_config

    server = uvicorn.Server(
        server_config(create_app(settings), settings.model_copy(update={"port": 0}))
    )
    serving = asyncio.create_task(server.serve())
    try:
        await until(lambda: bool(server.started and server.servers) or serving.done(), 60)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await serving


def of(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    """The data of every event of ``type_``."""
    return [e["data"] for e in events if e["type"] == type_]


def status(events: list[dict[str, Any]]) -> str:
    """The run's final status."""
    return str(events[-1]["data"]["status"])


def codes(events: list[dict[str, Any]]) -> list[str]:
    """Warning codes."""
    return [w["code"] for w in of(events, "warning")]


def judge(verdict: str, gaps: list[str] | None = None) -> Say:
    """A judge reply."""
    return Say.json({"reasoning": "r", "sufficiency": verdict, "gap_queries": gaps or []})


async def until(check: Callable[[], bool], within: float) -> None:
    """Poll ``check`` until true; TimeoutError after ``within`` seconds."""
    async with asyncio.timeout(within):
        while not check():  # noqa: ASYNC110 - counters and uvicorn's flag offer no event to await
            await asyncio.sleep(0.01)


@asynccontextmanager
async def serve_http(app: FastAPI) -> AsyncIterator[str]:
    """Serve ``app`` (its lifespan already running) with uvicorn on 127.0.0.1; yield its URL."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        await until(lambda: bool(server.started and server.servers), 10)
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await serving
