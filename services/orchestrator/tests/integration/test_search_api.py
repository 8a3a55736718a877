"""Every branch of the loop through the real HTTP API and the production wiring: real reader and
ranker servers, a local HTTP server for pages, the scripted SearXNG and the scripted LLM."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
import uvicorn
from fastapi import FastAPI
from orchestrator.app import create_app
from orchestrator.config import Settings
from ranker.config import Settings as RankerSettings
from ranker.server import build_server as build_ranker
from reader.config import Settings as ReaderSettings
from reader.server import build_server as build_reader

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Hang, Say
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result
from tests.conftest import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOPICS = {
    "tides": "Tides are caused by the gravitational pull of the Moon and the Sun on the oceans.",
    "moon": "The Moon orbits the Earth every 27.3 days and its gravity raises two tidal bulges.",
    "spring": "Spring tides happen when the Sun and the Moon line up, at new and full moon.",
    "neap": "Neap tides happen when the Sun and the Moon are at right angles to each other.",
}


@dataclass
class World:
    """Servers shared by the module: pages, reader, ranker."""

    pages_url: str
    reader_addr: str
    ranker_addr: str


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


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def world() -> AsyncIterator[World]:
    pages = TinyHTTPServer(serve_pages)
    await pages.start()
    reader = build_reader(ReaderSettings(port=0, allow_private_networks=True, workers=1))
    ranker = build_ranker(RankerSettings(port=0))
    try:
        reader_port = await reader.start()
        ranker_port = await ranker.start()
        yield World(pages.url, f"127.0.0.1:{reader_port}", f"127.0.0.1:{ranker_port}")
    finally:
        await reader.stop(0)
        await ranker.stop(0)
        await pages.stop()


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


@asynccontextmanager
async def stack(world: World, **settings: Any) -> AsyncIterator[Stack]:
    """Fakes plus the app with its production wiring, over ASGI."""
    async with AsyncExitStack() as es:
        llm = await es.enter_async_context(FakeLLM())
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
            **settings,
        }
        app: FastAPI = create_app(Settings(**config))
        await es.enter_async_context(app.router.lifespan_context(app))
        transport = httpx.ASGITransport(app=app)
        client = await es.enter_async_context(
            httpx.AsyncClient(transport=transport, base_url="http://t", timeout=30)
        )
        yield Stack(client, llm, searx, app)


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
        events = await s.ask("tides?")
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


async def test_llm_down_is_an_error_naming_its_url(world: World) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    async with stack(world, llm_base_url=dead) as s:
        events = await s.ask()
    (error,) = of(events, "error")
    assert error["code"] == "llm_unavailable"
    assert dead in error["message"]
    assert status(events) == "error"


@pytest.mark.parametrize("mode", ["down", "403"])
async def test_searxng_failure_is_an_error_naming_searxng(world: World, mode: str) -> None:
    async with stack(world) as s:
        if mode == "down":
            await s.searx.__aexit__(None, None, None)
        else:
            s.searx.mode = "403"
        events = await s.ask()
    (error,) = of(events, "error")
    assert error["code"] == "search_unavailable"
    assert "SearXNG" in error["message"]
    if mode == "403":
        assert "json" in error["message"].lower()
    assert status(events) == "error"


async def test_reader_down_falls_back_to_snippets(world: World) -> None:
    async with stack(world, reader_addr=f"127.0.0.1:{free_port()}") as s:
        s.llm.queue("judge", judge("insufficient"))
        events = await s.ask()
    assert "reader_unavailable" in codes(events)
    assert status(events) == "answered"
    excerpts = [src["excerpt"] for src in of(events, "sources")[0]["sources"]]
    assert excerpts[0] == TOPICS["tides"][:80]


async def test_ranker_down_keeps_engine_order(world: World) -> None:
    async with stack(world, ranker_addr=f"127.0.0.1:{free_port()}") as s:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        events = await s.ask()
    assert "ranker_unavailable" in codes(events)
    assert of(events, "rank.completed")[0]["urls"] == [f"{world.pages_url}/{t}" for t in TOPICS]
    assert status(events) == "answered"


async def test_readyz_names_dependencies_that_are_down(world: World) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    async with stack(world) as ok, stack(world, llm_base_url=dead) as bad:
        good = await ok.client.get("/readyz")
        down = await bad.client.get("/readyz")
    assert good.status_code == 200, good.text
    assert (down.status_code, down.json()["down"]) == (503, ["llm"])


async def test_disconnect_mid_answer_closes_the_llm_stream(world: World) -> None:
    async with stack(world) as s:
        s.llm.token_delay = 0.05
        s.llm.queue("synthesis", Say(" ".join(["tide"] * 400)))
        # the stack's lifespan already runs: uvicorn only serves the same app over TCP
        config = uvicorn.Config(s.app, host="127.0.0.1", port=0, log_config=None, lifespan="off")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        try:
            async with asyncio.timeout(10):
                while not server.started:  # noqa: ASYNC110 - uvicorn offers no "started" event
                    await asyncio.sleep(0.01)
            base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
            async with (
                httpx.AsyncClient(base_url=base, timeout=10) as c,
                c.stream("POST", "/v1/search", json={"query": "what causes tides"}) as reply,
            ):
                async for line in reply.aiter_lines():
                    if "answer.delta" in line:
                        break
            await s.llm.wait_until(lambda: s.llm.in_flight == 0, 1.0)
            assert s.llm.cancelled_streams == 1
        finally:
            server.should_exit = True
            await serving


async def test_disconnect_during_reads_cancels_the_readers_fetches(world: World) -> None:
    gone: list[str] = []
    fetching: list[str] = []

    async def hang(request: Request) -> Response:
        fetching.append(request.path)
        await asyncio.sleep(30)
        return Response(200, page_html("tides"), "text/html")

    async def until(check: Callable[[], bool], within: float) -> None:
        async with asyncio.timeout(within):
            while not check():  # noqa: ASYNC110 - counted by the page server, no event to await
                await asyncio.sleep(0.01)

    slow = TinyHTTPServer(hang, on_disconnect=lambda r: gone.append(r.path))
    await slow.start()
    try:
        async with stack(world) as s:
            s.searx.results = [
                searx_result(f"{slow.url}/slow{i}", "Slow", "slow") for i in range(3)
            ]
            s.llm.queue("judge", Hang())  # the prefetched reads stay in flight
            config = uvicorn.Config(
                s.app, host="127.0.0.1", port=0, log_config=None, lifespan="off"
            )
            server = uvicorn.Server(config)
            serving = asyncio.create_task(server.serve())
            try:
                await until(lambda: bool(server.started and server.servers), 10)
                base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
                async with (
                    httpx.AsyncClient(base_url=base, timeout=10) as c,
                    c.stream("POST", "/v1/search", json={"query": "slow pages"}) as reply,
                ):
                    async for line in reply.aiter_lines():
                        if "read.started" in line:
                            # wait while still reading: an abandoned line iterator is closed
                            # when collected, and that alone would drop the connection early
                            await until(lambda: len(fetching) == 3, 5)
                            break
                await until(lambda: len(gone) == 3, 1.0)
            finally:
                server.should_exit = True
                await serving
    finally:
        await slow.stop()
    assert sorted(gone) == ["/slow0", "/slow1", "/slow2"]


async def test_hanging_searxng_ends_in_an_error_not_a_hang(world: World) -> None:
    async with stack(world, searxng_timeout_s=0.3, searxng_retry_backoff_s=0.01) as s:
        s.searx.mode = "hang"
        events = await asyncio.wait_for(s.ask(), 10)
    (error,) = of(events, "error")
    assert error["code"] == "search_unavailable"
    assert "SearXNG" in error["message"]


async def test_hanging_llm_ends_in_an_error_naming_it(world: World) -> None:
    async with stack(world, llm_timeout_s=0.3) as s:
        s.llm.queue("plan", Hang())
        events = await asyncio.wait_for(s.ask(), 10)
    (error,) = of(events, "error")
    assert error["code"] == "llm_unavailable"
    assert s.llm.url in error["message"]
