"""Dependencies down, hanging or refusing, and clients that go away, through the real HTTP API
and the production wiring: each ends in a warning or an error event, never a hang."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import uvicorn
from ranker.config import Settings as RankerSettings
from ranker.server import build_server as build_ranker

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_llm import Hang, Say
from services.orchestrator.tests.fakes.fake_searxng import searx_result
from services.orchestrator.tests.integration.support import (
    TOPICS,
    World,
    codes,
    judge,
    of,
    page_html,
    stack,
    status,
    until,
    world,
)
from tests.conftest import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


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
    async with stack(world, allow_unsourced=False) as s:
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
    assert good.json()["reconnecting"] == []


async def test_readyz_says_which_grpc_dependency_is_reconnecting(world: World) -> None:
    async with stack(world, reader_addr=f"127.0.0.1:{free_port()}") as s:
        body = (await s.client.get("/readyz")).json()
    assert "reader" in body["down"]
    assert body["reconnecting"] == ["reader"]


async def test_readyz_names_the_index_when_it_is_down(world: World) -> None:
    async with stack(world, index_addr=f"127.0.0.1:{free_port()}") as s:
        down = await s.client.get("/readyz")
    assert (down.status_code, down.json()["down"]) == (503, ["index"])


async def test_a_web_and_local_question_is_answered_from_the_web_while_the_index_is_down(
    world: World,
) -> None:
    async with stack(world, index_addr=f"127.0.0.1:{free_port()}") as s:
        s.llm.queue("judge", judge("sufficient"))
        events = await s.ask(options={"sources": ["web", "local"]})
    assert "local_unavailable" in codes(events)
    assert status(events) == "answered"
    urls = [src["url"] for src in of(events, "sources")[0]["sources"]]
    assert urls
    assert all(u.startswith(world.pages_url) for u in urls)


async def test_disconnect_mid_answer_closes_the_llm_stream(world: World) -> None:
    async with stack(world) as s:
        s.llm.token_delay = 0.05
        s.llm.queue("synthesis", Say(" ".join(["tide"] * 400)))
        # the stack's lifespan already runs: uvicorn only serves the same app over TCP
        config = uvicorn.Config(s.app, host="127.0.0.1", port=0, log_config=None, lifespan="off")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        try:
            await until(lambda: bool(server.started and server.servers), 60)
            base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
            async with (
                httpx.AsyncClient(base_url=base, timeout=60) as c,
                c.stream("POST", "/v1/search", json={"query": "what causes tides"}) as reply,
            ):
                async for line in reply.aiter_lines():
                    if "answer.delta" in line:
                        break
            # Within 30 s, not 1 s (a busy box is slow to notice): the uncancelled stream would
            # still run for ~20 s (400 tokens, 0.05 s apart) and end uncancelled.
            await s.llm.wait_until(lambda: s.llm.in_flight == 0, 30)
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
                await until(lambda: bool(server.started and server.servers), 60)
                base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
                async with (
                    httpx.AsyncClient(base_url=base, timeout=60) as c,
                    c.stream("POST", "/v1/search", json={"query": "slow pages"}) as reply,
                ):
                    async for line in reply.aiter_lines():
                        if "read.started" in line:
                            # wait while still reading: an abandoned line iterator is closed
                            # when collected, and that alone would drop the connection early
                            await until(lambda: len(fetching) == 3, 30)
                            break
                # 5 s, not 1 s, for a busy box; it must stay below the reader's own 8 s fetch
                # limit, which would close uncancelled fetches too.
                await until(lambda: len(gone) == 3, 5)
            finally:
                server.should_exit = True
                await serving
    finally:
        await slow.stop()
    assert sorted(gone) == ["/slow0", "/slow1", "/slow2"]


async def test_hanging_searxng_ends_in_an_error_not_a_hang(world: World) -> None:
    settings = {"searxng_timeout_s": 0.3, "searxng_retry_backoff_s": 0.01}
    async with stack(world, allow_unsourced=False, **settings) as s:
        s.searx.mode = "hang"
        events = await asyncio.wait_for(s.ask(), 40)  # the question budget is 120 s
    (error,) = of(events, "error")
    assert error["code"] == "search_unavailable"
    assert "SearXNG" in error["message"]


async def test_hanging_llm_ends_in_an_error_naming_it(world: World) -> None:
    async with stack(world, llm_first_token_timeout_s=0.3) as s:
        s.llm.queue("judge", judge("sufficient"))
        s.llm.queue("synthesis", Hang())
        events = await asyncio.wait_for(s.ask(), 40)  # the question budget is 120 s
    (error,) = of(events, "error")
    assert error["code"] == "llm_unavailable"
    assert s.llm.url in error["message"]


async def test_a_restarted_ranker_is_used_again_and_readyz_says_while_it_reconnects(
    world: World,
) -> None:
    port = free_port()
    ranker = build_ranker(RankerSettings(port=port))
    await ranker.start()
    async with stack(world, ranker_addr=f"127.0.0.1:{port}") as s:
        s.llm.queue("judge", judge("sufficient"))
        before = await s.ask()
        await ranker.stop(0)
        down = (await s.client.get("/readyz")).json()
        ranker = build_ranker(RankerSettings(port=port))
        await ranker.start()
        try:
            # the channel retries within a second; poll readiness rather than assert a time
            async with asyncio.timeout(15):
                while (ready := (await s.client.get("/readyz")).json())["down"]:  # noqa: ASYNC110
                    await asyncio.sleep(0.1)
            s.llm.queue("judge", judge("sufficient"))
            after = await s.ask()
        finally:
            await ranker.stop(0)
    assert of(before, "rank.completed")[0]["ranked_by"] == "ranker"
    assert "ranker" in down["down"]
    assert down["reconnecting"] == ["ranker"]
    assert ready["reconnecting"] == []
    assert of(after, "rank.completed")[0]["ranked_by"] == "ranker"
