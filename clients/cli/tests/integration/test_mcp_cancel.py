"""A research tool call the assistant cancels over `quarry mcp` cancels the run on the server:
the bridge closes the call's HTTP stream, as an HTTP client going away does."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CancelledNotification, CancelledNotificationParams, ClientNotification

from services.orchestrator.tests.fakes.llm_script import Hang
from services.orchestrator.tests.integration.research_support import research_app
from services.orchestrator.tests.integration.support import World, world

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

QUARRY = str(Path(sys.executable).with_name("quarry"))


async def test_a_cancelled_research_call_cancels_the_run(world: World) -> None:
    async with research_app(world, research_max_evaluations=0) as (api, f):
        params = StdioServerParameters(command=QUARRY, args=["--url", api.base, "mcp"])
        f.llm.queue("synthesis", Hang(after_tokens=3))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()  # request 0; the tool call is request 1
            call = asyncio.create_task(session.call_tool("research", {"query": "how do tides"}))
            await f.llm.wait_until(lambda: len(f.llm.calls_of("synthesis")) == 1, 30)
            cancel = CancelledNotification(params=CancelledNotificationParams(requestId=1))
            await session.send_notification(ClientNotification(cancel))
            runs: list[dict[str, object]] = []
            async with asyncio.timeout(30):
                while not runs or runs[0]["status"] == "running":
                    await asyncio.sleep(0.2)
                    runs = (await api.client.get("/v1/research")).json()["runs"]
            call.cancel()
    assert runs[0]["status"] == "cancelled"
