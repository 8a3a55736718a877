"""One hostile page cannot starve everyone: a real reader with two extraction workers, two
hostile PDFs from two questions in flight, and a third question's page still extracted while
both PDFs are running or waiting (PDFs never hold every worker); and a PDF that never ends is
cut off at READER_PDF_TIMEOUT_S.

The PDFs are hostile by construction: their extraction blocks until the worker is killed
(services/reader/tests/stuck.py), so neither test depends on how fast this machine parses.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

import grpc
import pytest
from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.pool import ExtractorPool
from reader.server import WARM_JOB, ReaderServer, build_server
from reader.service import FAIR_KEY_HEADER

from services.reader.tests.pages import ARTICLE, PARAGRAPHS, make_pdf
from services.reader.tests.stuck import extract_or_block, stuck_pdf

Status = reader_pb2.ReadResponse.Status
# Worker processes start slowly on a busy machine (tens of seconds): only a hang should fail here.
pytestmark = pytest.mark.timeout(600)
if TYPE_CHECKING:  # the async stub type exists only in the .pyi
    Stub = reader_pb2_grpc.ReaderAsyncStub

Served = Callable[[Settings], AbstractAsyncContextManager[tuple[ReaderServer, "Stub"]]]
BOMB = stuck_pdf(make_pdf(["a PDF whose extraction never ends"]))
# The RPC deadline: a stuck PDF that the reader failed to cut off would end here instead.
RPC_TIMEOUT_S = 60


@pytest.fixture
def served() -> Served:
    @asynccontextmanager
    async def serve(settings: Settings) -> AsyncIterator[tuple[ReaderServer, Stub]]:
        pool = ExtractorPool(
            extract_or_block,
            workers=settings.worker_count,
            timeout_s=settings.extract_timeout_s,
            queue_size=settings.queue_size,
            warm_job=WARM_JOB,
        )
        server = build_server(settings, pool=pool)
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                yield server, reader_pb2_grpc.ReaderStub(channel)
        finally:
            await server.stop(0)

    return serve


async def _extract(stub: Stub, body: bytes, content_type: str, run: str) -> reader_pb2.ReadResponse:
    request = reader_pb2.ExtractRequest(
        html=body, url="https://x.test/a", content_type=content_type
    )
    reply: reader_pb2.ReadResponse = await stub.Extract(
        request, timeout=RPC_TIMEOUT_S, metadata=((FAIR_KEY_HEADER, run),)
    )
    return reply


def _two_bombs(stub: Stub) -> list[asyncio.Task[reader_pb2.ReadResponse]]:
    return [
        asyncio.create_task(_extract(stub, BOMB, "application/pdf", f"question-{q}"))
        for q in ("a", "b")
    ]


async def _admitted(server: ReaderServer, jobs: int) -> None:
    while server.pool.pending < jobs:  # noqa: ASYNC110 - the pool offers no event to await
        await asyncio.sleep(0.01)


async def test_two_hostile_pdfs_leave_another_questions_page_on_time(served: Served) -> None:
    # Limits far beyond the test: the PDFs cannot end before the page, however slow the box.
    settings = Settings(port=0, workers=2, pdf_timeout_s=110, extract_timeout_s=120)
    async with served(settings) as (server, stub):
        pdfs = _two_bombs(stub)
        await _admitted(server, 2)
        page = await _extract(stub, ARTICLE, "text/html; charset=utf-8", "question-c")
        assert page.status == Status.OK, page.error
        assert PARAGRAPHS[0][:50] in page.markdown
        assert not any(t.done() for t in pdfs)  # the page did not wait for the PDFs
        for task in pdfs:
            task.cancel()
        await asyncio.gather(*pdfs, return_exceptions=True)


async def test_a_pdf_that_never_ends_is_cut_off_at_the_pdf_limit(served: Served) -> None:
    # The general limits (120 s per extraction and per call) are beyond the RPC deadline: only
    # the PDF limit (0.5 s + the kill margin) can end these calls with "extraction timed out".
    # (With the default 8 s call budget, the second PDF's wait for a worker plus its own limit
    # outlasted that budget on a busy box: "timed out" instead.)
    settings = Settings(port=0, workers=2, pdf_timeout_s=0.5, extract_timeout_s=120, timeout_s=120)
    async with served(settings) as (server, stub):
        for reply in await asyncio.gather(*_two_bombs(stub)):
            assert reply.status == Status.TIMEOUT
            assert reply.error == "extraction timed out"
        # The killed workers are replaced; once they are warm (tens of seconds on a busy box,
        # more than a page's 8 s budget), an ordinary page is extracted again.
        while len(server.pool._idle) < settings.worker_count:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        page = await _extract(stub, ARTICLE, "text/html; charset=utf-8", "question-c")
        assert page.status == Status.OK, page.error
