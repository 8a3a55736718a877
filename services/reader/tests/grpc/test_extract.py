"""Extract over gRPC, worker replacement, overload, warm-up health and the read cache."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.pool import ExtractorPool
from reader.server import WARM_JOB, ReaderServer, build_server

from services.reader.tests.pages import (
    ARTICLE,
    PARAGRAPHS,
    PDF_LINES,
    HttpServer,
    fixed,
    make_pdf,
)
from services.reader.tests.stuck import STUCK_MARKER, extract_or_block, wait_for_file

Status = reader_pb2.ReadResponse.Status
# Worker processes start slowly on a busy machine (tens of seconds): only a hang should fail here.
pytestmark = pytest.mark.timeout(600)
if TYPE_CHECKING:  # the async stub type exists only in the .pyi
    Stub = reader_pb2_grpc.ReaderAsyncStub


@pytest_asyncio.fixture
async def served() -> AsyncIterator[tuple[ReaderServer, Stub]]:
    # One worker, no queue and a 5 s extraction limit: a page that never ends (STUCK_MARKER)
    # is killed at the limit; every other page has ample time on any machine.
    settings = Settings(port=0, workers=1, queue_size=0, extract_timeout_s=5, max_bytes=8 << 20)
    pool = ExtractorPool(extract_or_block, workers=1, timeout_s=5, queue_size=0, warm_job=WARM_JOB)
    server = build_server(settings, pool=pool)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            yield server, reader_pb2_grpc.ReaderStub(channel)
    finally:
        await server.stop(0)


async def _extract(stub: Stub, body: bytes, content_type: str = "") -> reader_pb2.ReadResponse:
    request = reader_pb2.ExtractRequest(
        html=body, url="https://x.test/a", content_type=content_type
    )
    reply: reader_pb2.ReadResponse = await stub.Extract(request, timeout=30)
    return reply


async def test_extract_html_pdf_and_unsupported(served: tuple[ReaderServer, Stub]) -> None:
    _, stub = served
    html = await _extract(stub, ARTICLE, "text/html; charset=utf-8")
    assert html.status == Status.OK, html.error
    assert PARAGRAPHS[0][:50] in html.markdown
    assert html.final_url == "https://x.test/a"
    assert html.fetched_bytes == len(ARTICLE)
    pdf = await _extract(stub, make_pdf(PDF_LINES), "application/pdf")
    assert pdf.status == Status.OK, pdf.error
    assert PDF_LINES[1] in pdf.markdown
    image = await _extract(stub, b"\x89PNG....", "image/png")
    assert image.status == Status.UNSUPPORTED
    untyped_binary = await _extract(stub, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert untyped_binary.status == Status.UNSUPPORTED
    sniffed = await _extract(stub, ARTICLE)
    assert sniffed.status == Status.OK
    assert sniffed.content_type == "text/html"


@pytest.mark.parametrize(
    "request_",
    [
        reader_pb2.ExtractRequest(),
        reader_pb2.ExtractRequest(html=b"<p>x</p>", url="u" * 20_000),
        reader_pb2.ExtractRequest(html=b"<p>x</p>", content_type="t" * 300),
    ],
)
async def test_malformed_extract_is_invalid_argument(
    served: tuple[ReaderServer, Stub], request_: reader_pb2.ExtractRequest
) -> None:
    _, stub = served
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.Extract(request_, timeout=10)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_pathological_page_kills_the_worker_and_service_keeps_answering(
    served: tuple[ReaderServer, Stub],
) -> None:
    server, stub = served
    (before,) = server.pool._all
    slow = asyncio.create_task(_extract(stub, ARTICLE + STUCK_MARKER, "text/html"))
    while not server.pool.pending:  # noqa: ASYNC110 - the pool offers no event to await
        await asyncio.sleep(0.01)
    # The only worker is busy and the queue holds nothing: fail fast, do not wait.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await _extract(stub, ARTICLE)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # Read refuses before fetching anything: its page could not be extracted either.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.Read(reader_pb2.ReadRequest(url="http://127.0.0.1:9/x"), timeout=10)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    reply = await slow
    assert reply.status == Status.TIMEOUT
    assert reply.error == "extraction timed out"
    while before.process.exitcode is None:  # noqa: ASYNC110 - reaped in a background thread
        await asyncio.sleep(0.01)
    assert before.process.exitcode == -9  # SIGKILL
    # Wait for the replacement to be warm: on a busy box its start (a spawned process importing
    # Trafilatura) took longer than the reader's 8 s budget for a page waiting for it.
    while not server.pool._idle:  # noqa: ASYNC110 - the pool offers no event to await
        await asyncio.sleep(0.01)
    after = await _extract(stub, ARTICLE)
    assert after.status == Status.OK, after.error
    assert server.pool._all
    assert before not in server.pool._all


async def test_not_serving_until_the_pool_is_warm(tmp_path: Path) -> None:
    # A pool whose warm-up job ends when the test creates a file: health must stay
    # NOT_SERVING until then, however long the first health check takes.
    warmed = tmp_path / "warmed"
    pool = ExtractorPool(wait_for_file, workers=1, timeout_s=5, queue_size=0, warm_job=str(warmed))
    server = build_server(Settings(port=0), pool=pool)
    starting = asyncio.create_task(server.start())
    try:
        while not server.port:  # noqa: ASYNC110 -- polling a plain attribute, no event to await
            await asyncio.sleep(0.005)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            request = health_pb2.HealthCheckRequest(service="quarry.v1.Reader")
            first = await health.Check(request, timeout=5)
            assert first.status == health_pb2.HealthCheckResponse.NOT_SERVING
            warmed.touch()
            await starting
            second = await health.Check(request, timeout=5)
            assert second.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        warmed.touch()
        await starting
        await server.stop(0)


async def test_repeated_read_is_served_from_the_cache() -> None:
    settings = Settings(port=0, workers=1, allowed_cidrs=(ipaddress.ip_network("127.0.0.1/32"),))
    server = build_server(settings)
    await server.start()
    try:
        async with (
            HttpServer({"/article": fixed(ARTICLE)}) as web,
            grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel,
        ):
            stub = reader_pb2_grpc.ReaderStub(channel)
            first = await stub.Read(reader_pb2.ReadRequest(url=web.url("/article")), timeout=20)
            # Same page, different spelling: the normalised URL is the key.
            again = web.url("/article#section").replace("http://", "HTTP://")
            second = await stub.Read(reader_pb2.ReadRequest(url=again), timeout=20)
            assert first.status == Status.OK
            assert not first.cached
            assert second.cached
            assert second.markdown == first.markdown
            assert second.url == again
            assert len(web.requests) == 1
    finally:
        await server.stop(0)
