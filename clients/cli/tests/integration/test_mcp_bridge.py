"""`quarry mcp` (a real process) bridging the MCP SDK's own stdio client to the real
orchestrator's /mcp: the token it forwards decides who the caller is, and a wrong token or an
unreachable server is a clear JSON-RPC error, never a dead process or a traceback on stdout.
(test_mcp.py runs the same tool calls over both transports.)"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.types import TextContent

from services.orchestrator.tests.integration.support import (
    World,
    judge,
    serve_http,
    stack,
    world,
)
from tests.conftest import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

QUARRY = str(Path(sys.executable).with_name("quarry"))
ALICE = "alice-token-0123456789abcdef"


@asynccontextmanager
async def bridged(base: str, token: str) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "QUARRY_API_TOKEN": token}
    params = StdioServerParameters(command=QUARRY, args=["--url", base, "mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


async def test_the_token_is_forwarded_and_the_tool_runs_as_its_user(world: World) -> None:
    async with (
        stack(world, api_tokens=f"alice:{ALICE}") as s,
        serve_http(s.app) as base,
        bridged(base, ALICE) as session,
    ):
        await session.initialize()
        s.llm.queue("judge", judge("sufficient"))
        result = await session.call_tool("search", {"query": "what causes tides"})
    assert not result.isError
    text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
    assert "Sources:" in text


async def test_a_wrong_token_is_an_error_naming_the_refusal(world: World) -> None:
    async with (
        stack(world, api_tokens=f"alice:{ALICE}") as s,
        serve_http(s.app) as base,
        bridged(base, "not-a-token") as session,
    ):
        with pytest.raises(McpError, match="Quarry answered 401"):
            await session.initialize()


async def test_an_unreachable_server_is_an_error_naming_it() -> None:
    base = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    async with bridged(base, "") as session:
        with pytest.raises(McpError, match=f"Quarry's API at {base}.* is unreachable"):
            await session.initialize()
