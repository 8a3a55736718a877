"""`quarry mcp`: Quarry's MCP server over stdio, for desktop assistants that launch it.

The tools call a running Quarry over its HTTP API (``--url``, bearer token from
``QUARRY_API_TOKEN``); stdout carries only the MCP protocol, so nothing else may print there.
"""

from __future__ import annotations

import asyncio

from orchestrator.api.mcp.remote import HttpBackend
from orchestrator.api.mcp.server import build_mcp


async def serve_stdio(url: str, token: str) -> None:
    """Serve MCP on stdin/stdout until the client closes them."""
    backend = HttpBackend(url, token=token)
    try:
        await build_mcp(lambda _ctx: backend).run_stdio_async()
    finally:
        await backend.aclose()


def run_stdio(url: str, token: str) -> int:
    """Blocking entry for the CLI; returns the exit status."""
    asyncio.run(serve_stdio(url, token))
    return 0
