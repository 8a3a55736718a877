"""With ORCHESTRATOR_WEB_SEARCH=off nothing leaves the machine, whichever face a request comes
through: HTTP quick search, HTTP deep research, the OpenAI-compatible API, MCP and the `quarry`
CLI (a real process). Each test asserts the scripted SearXNG saw no query and the page server
behind the real reader no request; a request that can only search the web is refused up front.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from services.orchestrator.tests.fakes.fake_llm import Say
from services.orchestrator.tests.integration.corpus_support import FACT, corpus_world
from services.orchestrator.tests.integration.research_support import research_reply
from services.orchestrator.tests.integration.support import (
    Stack,
    World,
    codes,
    of,
    serve_http,
    stack,
    status,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["corpus_world"]  # the fixture, imported so pytest finds it here

OFF = {"web_search": "off"}
QUARRY = str(Path(sys.executable).with_name("quarry"))


def nothing_left_the_machine(s: Stack, world: World, before: int) -> None:
    assert s.searx.queries == []
    assert world.page_requests[before:] == []


def refused(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 422, reply.text
    assert reply.headers["content-type"].startswith("application/problem+json")
    body = dict(reply.json())
    assert body["code"] == "search_off"
    assert "ORCHESTRATOR_WEB_SEARCH=off" in body["detail"]
    return body


@asynccontextmanager
async def mcp_session(base: str) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(f"{base}/mcp") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _text(result: object) -> str:
    content = getattr(result, "content", [])
    return "\n".join(c.text for c in content if isinstance(c, TextContent))


async def test_quick_search_asking_for_the_web_is_refused(corpus_world: World) -> None:
    before = len(corpus_world.page_requests)
    async with stack(corpus_world, **OFF) as s:
        reply = await s.client.post(
            "/v1/search", json={"query": "what causes tides", "options": {"sources": ["web"]}}
        )
        refused(reply)
        # the request's own default: answered from the model alone, labelled, nothing searched
        events = await s.ask()
    assert "answered_without_sources" in codes(events)
    assert status(events) == "answered"
    assert not of(events, "search.started")
    nothing_left_the_machine(s, corpus_world, before)


async def test_research_with_nothing_but_the_web_is_refused_up_front(corpus_world: World) -> None:
    before = len(corpus_world.page_requests)
    async with stack(corpus_world, **OFF) as s:
        asked_web = await s.client.post(
            "/v1/research", json={"query": "how do tides work", "options": {"sources": ["web"]}}
        )
        default = await s.client.post("/v1/research", json={"query": "how do tides work"})
        runs = (await s.client.get("/v1/research")).json()
    refused(asked_web)
    assert "Deep research needs something to search" in refused(default)["detail"]
    assert runs["total"] == 0  # nothing was stored, nothing started
    nothing_left_the_machine(s, corpus_world, before)


async def test_research_over_local_documents_never_reaches_the_web(
    corpus_world: World, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "lighthouse.md").write_text(f"# Lighthouse\n\n{FACT}\n")
    before = len(corpus_world.page_requests)
    async with stack(corpus_world, corpus_dir=str(root), **OFF) as s, serve_http(s.app) as base:
        s.llm.script = research_reply
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            await _indexed(client)
            # web AND local asked: the web is dropped, the local documents are searched
            reply = await client.post(
                "/v1/research",
                json={
                    "query": "the lighthouse passphrase",
                    "options": {"sources": ["web", "local"]},
                },
            )
            assert reply.status_code == 202, reply.text
            run_id = reply.json()["research_id"]
            async with client.stream("GET", f"/v1/research/{run_id}/events") as stream:
                text = "".join([chunk async for chunk in stream.aiter_text()])
            shown = (await client.get(f"/v1/research/{run_id}")).json()
    assert "research.completed" in text
    assert shown["status"] == "completed"
    assert "event: search.started" in text
    assert '"source": "web"' not in text
    assert '"source":"web"' not in text
    nothing_left_the_machine(s, corpus_world, before)


async def _indexed(client: httpx.AsyncClient) -> None:
    for _ in range(1200):
        body = (await client.get("/v1/corpus")).json()
        if body["last_refresh"] is not None:
            assert body["last_refresh"]["status"] == "ok", body
            return
        await asyncio.sleep(0.05)
    pytest.fail("the corpus was not indexed")


async def test_openai_research_and_search_with_web_search_off(corpus_world: World) -> None:
    before = len(corpus_world.page_requests)
    async with stack(corpus_world, **OFF) as s, serve_http(s.app) as base:
        s.llm.queue("synthesis", Say("Tides come from the Moon."))
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            messages = [{"role": "user", "content": "how do tides work"}]
            research = await client.post(
                "/v1/chat/completions", json={"model": "quarry-research", "messages": messages}
            )
            search = await client.post(
                "/v1/chat/completions", json={"model": "quarry-search", "messages": messages}
            )
    assert research.status_code == 422, research.text
    assert research.json()["error"]["code"] == "search_off"
    assert search.status_code == 200, search.text
    assert search.json()["sources"] == []
    nothing_left_the_machine(s, corpus_world, before)


async def test_mcp_tools_with_web_search_off(corpus_world: World) -> None:
    before = len(corpus_world.page_requests)
    async with (
        stack(corpus_world, **OFF) as s,
        serve_http(s.app) as base,
        mcp_session(base) as session,
    ):
        web = await session.call_tool("search", {"query": "tides", "sources": ["web"]})
        research = await session.call_tool("research", {"query": "how do tides work"})
    assert web.isError
    assert "ORCHESTRATOR_WEB_SEARCH=off" in _text(web)
    assert research.isError
    assert "Deep research needs something to search" in _text(research)
    nothing_left_the_machine(s, corpus_world, before)


async def _quarry(base: str, *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        QUARRY,
        "--url",
        base,
        *args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    return int(proc.returncode or 0), err.decode()


async def test_cli_ask_and_research_with_web_search_off(corpus_world: World) -> None:
    before = len(corpus_world.page_requests)
    async with stack(corpus_world, **OFF) as s, serve_http(s.app) as base:
        ask = await _quarry(base, "ask", "--sources", "web", "what causes tides")
        research = await _quarry(base, "research", "how do tides work")
    assert ask[0] == 2
    assert "ORCHESTRATOR_WEB_SEARCH=off" in ask[1]
    assert research[0] == 1
    assert "Deep research needs something to search" in research[1]
    nothing_left_the_machine(s, corpus_world, before)
