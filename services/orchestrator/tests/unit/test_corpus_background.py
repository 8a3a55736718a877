"""The start-up refresh retries when every file failed (the reader was still starting)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import grpc
import pytest
from orchestrator.adapters.corpus import service as service_module
from orchestrator.adapters.corpus.indexer import Indexer
from orchestrator.adapters.corpus.service import CorpusService
from orchestrator.adapters.grpc.corpus import CorpusClient, Extractor
from quarry.v1 import reader_pb2

from services.orchestrator.tests.unit.corpus_doubles import (
    Ctx,
    FakeCorpusRanker,
    FakeExtractReader,
)
from services.orchestrator.tests.unit.doubles import grpc_server


class SlowStartReader(FakeExtractReader):
    """Times out the first ``cold`` extractions, as a reader whose workers are still starting."""

    def __init__(self, cold: int) -> None:
        super().__init__()
        self.cold = cold

    async def Extract(
        self, request: reader_pb2.ExtractRequest, context: Ctx
    ) -> reader_pb2.ReadResponse:
        if self.cold > 0:
            self.cold -= 1
            self.extracted.append(request.url)
            status = reader_pb2.ReadResponse
            return status(url=request.url, status=status.TIMEOUT, error="timed out")
        return await super().Extract(request, context)


@asynccontextmanager
async def background(
    tmp_path: Path, ranker: FakeCorpusRanker, reader: FakeExtractReader
) -> AsyncIterator[CorpusService]:
    """A corpus service over ``tmp_path`` (no rescan), over real gRPC to the two doubles."""
    async with AsyncExitStack() as stack:
        channels = []
        for servicer in (ranker, reader):
            server = grpc_server(servicer)
            port = await server.start()
            stack.push_async_callback(server.stop, 0)
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
            stack.push_async_callback(channel.close)
            channels.append(channel)
        corpus = CorpusClient(channels[0], limit=asyncio.Semaphore(4))
        indexer = Indexer(corpus, Extractor(channels[1]), max_file_bytes=65536, concurrency=2)
        yield CorpusService(
            corpus, indexer, corpus_dir=str(tmp_path), allow_any_path=False, rescan_s=0
        )


async def test_a_refresh_where_every_file_failed_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("# A\n\nAlpha text about quarries.\n")
    (tmp_path / "b.md").write_text("# B\n\nBeta text about answers.\n")
    monkeypatch.setattr(service_module, "STARTUP_BACKOFF_S", (0.01, 0.01))
    ranker, reader = FakeCorpusRanker(), SlowStartReader(cold=2)
    async with background(tmp_path, ranker, reader) as service:
        await asyncio.wait_for(service.run_background(), 10)
    assert len(reader.extracted) == 4  # both files twice: the cold start, then the retry
    assert len(ranker.corpus.committed) == 2


async def test_every_file_failing_is_tried_through_the_backoff_table_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("# A\n\nAlpha text about quarries.\n")
    monkeypatch.setattr(service_module, "STARTUP_BACKOFF_S", (0.01, 0.01))
    ranker, reader = FakeCorpusRanker(), SlowStartReader(cold=100)  # never warms up
    async with background(tmp_path, ranker, reader) as service:
        await asyncio.wait_for(service.run_background(), 10)  # returns: no rescan configured
    assert len(reader.extracted) == 3  # the first try and one per entry of the table
