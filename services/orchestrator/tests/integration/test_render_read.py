"""A question whose pages only JavaScript writes: answered through the reader's render tier
(real reader, real Chromium), lost without it. The read events say which tier read each page.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from index.config import Settings as IndexSettings
from index.server import build_server as build_index
from ranker.config import Settings as RankerSettings
from ranker.server import build_server as build_ranker
from reader.config import Settings as ReaderSettings
from reader.server import build_server as build_reader

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.integration.support import (
    TOPICS,
    World,
    judge,
    of,
    stack,
    status,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is missing"),
]

# Only the page's own text says this (the search snippets do not).
DETAIL = "Paragraph 3 adds detail about tides"


def _shell(topic: str) -> bytes:
    return (
        f"<html><head><title>All about {topic}</title>"
        f"<script defer src='/{topic}.js'></script></head>"
        "<body><div id='root'></div></body></html>"
    ).encode()


def _script(topic: str) -> bytes:
    body = "".join(
        f"<p>{TOPICS[topic]} Paragraph {i} adds detail about {topic}.</p>" for i in range(6)
    )
    markup = f"<article><h1>All about {topic}</h1>{body}</article>"
    return f"document.getElementById('root').innerHTML = {json.dumps(markup)};".encode()


async def _serve(request: Request) -> Response:
    name = request.path.strip("/")
    if name in TOPICS:
        return Response(200, _shell(name), "text/html; charset=utf-8")
    if name.endswith(".js") and name[:-3] in TOPICS:
        return Response(200, _script(name[:-3]), "application/javascript")
    return Response(404, b"not found", "text/plain")


@asynccontextmanager
async def js_world(render: str) -> AsyncIterator[World]:
    """JS-only fixture pages and real reader (``render`` tier setting), ranker and index."""
    pages = TinyHTTPServer(_serve)
    await pages.start()
    reader = build_reader(
        ReaderSettings(port=0, allow_private_networks=True, workers=1, render=render)
    )
    ranker = build_ranker(RankerSettings(port=0))
    index = build_index(IndexSettings(port=0))
    try:
        reader_port, ranker_port, index_port = (
            await reader.start(),
            await ranker.start(),
            await index.start(),
        )
        yield World(
            pages.url,
            f"127.0.0.1:{reader_port}",
            f"127.0.0.1:{ranker_port}",
            f"127.0.0.1:{index_port}",
        )
    finally:
        for server in (reader, ranker, index):
            await server.stop(0)
        await pages.stop()


async def _ask(world: World) -> tuple[list[dict[str, Any]], str]:
    # A generous read timeout: only the render tier's own caps may end a render.
    async with stack(world, read_timeout_s=60, read_batch_timeout_s=120) as s:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        events = await s.ask()
        calls = s.llm.calls_of("synthesis")
    return events, calls[0].prompt if calls else ""


async def test_js_only_pages_are_answered_through_the_render_tier() -> None:
    async with js_world("on-demand") as world:
        events, prompt = await _ask(world)
    assert status(events) == "answered"
    reads = of(events, "read.completed")
    assert reads
    assert {r["status"] for r in reads} == {"OK"}
    assert {r["tier"] for r in reads} == {"render"}
    assert {r["render"]["status"] for r in reads} == {"RENDERED"}
    assert DETAIL in prompt


async def test_without_the_render_tier_the_pages_are_lost() -> None:
    async with js_world("off") as world:
        events, prompt = await _ask(world)
    reads = of(events, "read.completed")
    assert reads
    assert {r["status"] for r in reads} == {"EMPTY"}
    assert all("render" not in r for r in reads)
    assert DETAIL not in prompt
