"""The corpus refresh stream: framed like every other stream, with keep-alives while idle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

from orchestrator.adapters.corpus.indexer import Counts
from orchestrator.adapters.corpus.service import CorpusService
from orchestrator.api.http.corpus_routes import _stream
from orchestrator.api.shared.sse import KEEP_ALIVE


class _SlowRefresh:
    """A refresh that runs until the test lets it finish."""

    busy = False

    def __init__(self) -> None:
        self.release = asyncio.Event()

    def start_refresh(
        self, folder: str, on_progress: Callable[[Counts], None]
    ) -> asyncio.Future[Any]:
        async def finish() -> _Result:
            await self.release.wait()
            return _Result()

        return asyncio.ensure_future(finish())


class _Result:
    stats = None

    def as_dict(self) -> dict[str, Any]:
        return {"status": "ok"}


async def test_an_idle_refresh_stream_sends_keep_alives_until_it_ends() -> None:
    service = _SlowRefresh()
    chunks: list[bytes] = []
    stream = _stream(cast(CorpusService, service), "/docs", "sse", keepalive_s=0.01)
    async with asyncio.timeout(30):
        async for chunk in stream:
            chunks.append(chunk)
            if chunk == KEEP_ALIVE:
                service.release.set()  # the refresh ends only once a keep-alive was sent
    assert chunks[0].startswith(b"id: 0\nevent: refresh.started\n")
    assert KEEP_ALIVE in chunks
    assert chunks[-1].startswith(b"id: 1\nevent: refresh.completed\n")


async def test_ndjson_gets_no_comment_lines() -> None:
    service = _SlowRefresh()
    stream = _stream(cast(CorpusService, service), "/docs", "ndjson", keepalive_s=0.01)
    chunks: list[bytes] = []
    async with asyncio.timeout(30):
        async for chunk in stream:
            chunks.append(chunk)
            if len(chunks) == 1:
                await asyncio.sleep(0.05)  # a few keep-alive periods pass
                service.release.set()
    assert all(c.startswith(b"{") for c in chunks)
