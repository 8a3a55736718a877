"""Per-request SearXNG engines and result page (issue 27 item 5) through every face that takes
options: the HTTP API, the OpenAI-compatible API's extra body and the MCP search tool (HTTP and
stdio transports), each reaching the SearXNG stand-in's query string; bad values are refused
before anything is searched."""

from __future__ import annotations

from typing import Any

import pytest

from services.orchestrator.tests.integration.support import (
    World,
    judge,
    serve_http,
    stack,
    status,
    world,
)
from services.orchestrator.tests.integration.test_mcp import _text, http_session, stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

ENGINES = ["wikipedia", "arch linux wiki"]


def asked(searches: list[Any]) -> list[tuple[str | None, str | None]]:
    return [(r.query.get("engines"), r.query.get("pageno")) for r in searches]


async def test_http_options_reach_searxng(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue("judge", judge("sufficient"))
        options = {"engines": ENGINES, "pageno": 2, "mode": "balanced", "max_rounds": 1}
        events = await s.ask(options=options)
    assert status(events) == "answered"
    assert asked(s.searx.searches)[0] == ("wikipedia,arch linux wiki", "2")


@pytest.mark.parametrize(
    "options",
    [
        {"engines": ["google,bing"]},  # a comma would smuggle a second name
        {"engines": ["Google"]},
        {"engines": ["x" * 41]},
        {"engines": []},
        {"engines": [f"e{i}" for i in range(17)]},
        {"pageno": 0},
        {"pageno": 11},
    ],
)
async def test_bad_engines_or_page_are_refused_before_searching(
    world: World, options: dict[str, Any]
) -> None:
    async with stack(world) as s:
        reply = await s.client.post("/v1/search", json={"query": "tides", "options": options})
        chat = await s.client.post(
            "/v1/chat/completions",
            json={
                "model": "quarry-search",
                "messages": [{"role": "user", "content": "tides"}],
                "options": options,
            },
        )
    assert reply.status_code == 422
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert chat.status_code == 422
    assert s.searx.searches == []


async def test_openai_extra_body_options_reach_searxng(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue("judge", judge("sufficient"))
        reply = await s.client.post(
            "/v1/chat/completions",
            json={
                "model": "quarry-search",
                "messages": [{"role": "user", "content": "what causes tides"}],
                # what the openai SDK sends for extra_body={"options": {...}}
                "options": {"engines": ["wikipedia"], "pageno": 3},
            },
        )
    assert reply.status_code == 200, reply.text
    assert asked(s.searx.searches)[0] == ("wikipedia", "3")


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_mcp_search_takes_engines_and_page(world: World, transport: str) -> None:
    opener = http_session if transport == "http" else stdio_session
    async with stack(world) as s, serve_http(s.app) as base, opener(base) as session:
        s.llm.queue("judge", judge("sufficient"))
        args = {"query": "what causes tides", "engines": ["wikipedia"], "pageno": 4}
        result = await session.call_tool("search", args)
        searched = len(s.searx.searches)
        refused = await session.call_tool("search", {"query": "tides", "pageno": 12})
    assert not result.isError, _text(result)
    assert asked(s.searx.searches)[0] == ("wikipedia", "4")
    assert refused.isError
    assert "pageno" in _text(refused)
    assert len(s.searx.searches) == searched  # the refused call searched nothing
