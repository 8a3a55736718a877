"""One hostile page cannot starve everyone: a real reader with two extraction workers, two
hostile PDFs from two questions in flight, and a third question's page still extracted while
both PDFs are running or waiting (PDFs never hold every worker)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import grpc
import pytest_asyncio
from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.server import ReaderServer, build_server
from reader.service import FAIR_KEY_HEADER

from services.reader.tests.pages import ARTICLE, PARAGRAPHS, make_pdf

Status = reader_pb2.ReadResponse.Status
if TYPE_CHECKING:  # the async stub type exists only in the .pyi
    Stub = reader_pb2_grpc.ReaderAsyncStub

# ~830 kB, one page of 20,000 text lines: pypdf needs ~9 s for it on the 2-core machine.
HOSTILE_LINES = 20_000


@pytest_asyncio.fixture
async def served() -> AsyncIterator[tuple[ReaderServer, Stub]]:
    settings = Settings(port=0, workers=2, pdf_timeout_s=1.0, max_bytes=4 << 20)
    server = build_server(settings)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            yield server, reader_pb2_grpc.ReaderStub(channel)
    finally:
        await server.stop(0)


async def _extract(stub: Stub, body: bytes, content_type: str, run: str) -> reader_pb2.ReadResponse:
    request = reader_pb2.ExtractRequest(
        html=body, url="https://x.test/a", content_type=content_type
    )
    reply: reader_pb2.ReadResponse = await stub.Extract(
        request, timeout=60, metadata=((FAIR_KEY_HEADER, run),)
    )
    return reply


async def test_two_hostile_pdfs_leave_another_questions_page_on_time(
    served: tuple[ReaderServer, Stub],
) -> None:
    server, stub = served
    bomb = make_pdf([f"line {i} of a hostile document" for i in range(HOSTILE_LINES)])
    pdfs = [
        asyncio.create_task(_extract(stub, bomb, "application/pdf", f"question-{q}"))
        for q in ("a", "b")
    ]
    while server.pool.pending < 2:  # noqa: ASYNC110 - both PDFs admitted; no event to await
        await asyncio.sleep(0.01)
    page = await _extract(stub, ARTICLE, "text/html; charset=utf-8", "question-c")
    assert page.status == Status.OK, page.error
    assert PARAGRAPHS[0][:50] in page.markdown
    assert not any(t.done() for t in pdfs)  # the page did not wait for the PDFs
    # The PDFs end within READER_PDF_TIMEOUT_S (+1 s to kill the stuck page), not pypdf's ~9 s.
    for reply in await asyncio.gather(*pdfs):
        assert reply.status == Status.TIMEOUT
