"""Quarry's MCP server through the SDK's own client, over streamable HTTP (mounted at /mcp) and
over stdio (`quarry mcp`, a real process calling the API), against the production wiring."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from pydantic import AnyUrl

from services.orchestrator.tests.integration.support import (
    World,
    judge,
    serve_http,
    stack,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

QUARRY = str(Path(sys.executable).with_name("quarry"))


@asynccontextmanager
async def http_session(base: str) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(f"{base}/mcp") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(base: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=QUARRY, args=["--url", base, "mcp"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _text(result: object) -> str:
    content = getattr(result, "content", [])
    return "\n".join(c.text for c in content if isinstance(c, TextContent))


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_lists_and_calls_search(world: World, transport: str) -> None:
    lines: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")

    opener = http_session if transport == "http" else stdio_session
    async with stack(world) as s, serve_http(s.app) as base, opener(base) as session:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        tools = {t.name: t for t in (await session.list_tools()).tools}
        result = await session.call_tool(
            "search", {"query": "what causes tides"}, progress_callback=on_progress
        )
        templates = await session.list_resource_templates()
    assert set(tools) == {"search", "research", "index"}
    assert "Example: search(" in (tools["search"].description or "")
    assert not result.isError, _text(result)
    text = _text(result)
    assert "Sources:" in text
    assert "[1] All about" in text
    assert f"{world.pages_url}/" in text
    assert any(line.startswith("Reading") for line in lines), lines
    assert [t.uriTemplate for t in templates.resourceTemplates] == [
        "quarry://sessions/{session_id}"
    ]


async def test_session_resource_and_index_refusal_over_http(world: World, tmp_path: Path) -> None:
    async with stack(world) as s, serve_http(s.app) as base, http_session(base) as session:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        answer = _text(await session.call_tool("search", {"query": "what causes tides"}))
        listed = (await s.client.get("/v1/sessions")).json()
        # a conversation from the HTTP API (or the web UI) is readable as a resource
        s.llm.queue("judge", judge("sufficient"))
        await s.ask("what causes tides", session_id="tides-chat")
        resource = await session.read_resource(AnyUrl("quarry://sessions/tides-chat"))
        refused = await session.call_tool("index", {"path": str(tmp_path)})
    # a tool call is one question: it leaves no conversation behind
    assert "quarry://sessions/" not in answer
    assert listed["total"] == 0
    body = resource.contents[0]
    assert "## what causes tides" in getattr(body, "text", "")
    assert refused.isError
    assert "is outside the corpus roots" in _text(refused)
