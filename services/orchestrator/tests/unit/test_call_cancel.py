"""Cancelling a question cancels its reads on the reader, with OpenTelemetry's client
interceptor installed as in the real process (which alone leaves the RPC running)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorClient
from orchestrator.adapters.grpc import calls
from orchestrator.adapters.grpc.reader import ReaderClient
from orchestrator.core.ask.domain import ReaderUnavailable

from services.orchestrator.tests.unit.doubles import FakeReader, grpc_server
from services.orchestrator.tests.unit.test_disconnect import until

PAGE = {"http://a.test/": ("A", "Quarry reads pages.")}


@pytest.fixture
def instrumented() -> Iterator[None]:
    instrumentor = GrpcAioInstrumentorClient()
    instrumentor.instrument()
    try:
        yield
    finally:
        instrumentor.uninstrument()


@pytest.mark.usefixtures("instrumented")
async def test_cancelled_read_is_cancelled_on_the_reader() -> None:
    reader = FakeReader(PAGE, delay=30)
    server = grpc_server(reader)
    port = await server.start()
    try:
        async with calls.channel(f"127.0.0.1:{port}") as channel:
            client = ReaderClient(channel, limit=asyncio.Semaphore(4), retry_delay_s=0.01)
            task = asyncio.create_task(client.read("http://a.test/", timeout=20))
            assert await until(lambda: reader.inflight == 1, 5)
            task.cancel()
            assert await until(lambda: reader.cancelled == 1, 5)
            assert reader.inflight == 0
    finally:
        await server.stop(0)


@pytest.mark.usefixtures("instrumented")
async def test_calls_through_the_interceptor_still_answer_and_fail_as_before() -> None:
    reader = FakeReader(PAGE)
    server = grpc_server(reader)
    port = await server.start()
    async with calls.channel(f"127.0.0.1:{port}") as channel:
        client = ReaderClient(channel, limit=asyncio.Semaphore(4), retry_delay_s=0.01)
        page = await client.read("http://a.test/", timeout=5)
        assert (page.status, page.title) == ("OK", "A")
        missing = await client.read("http://b.test/", timeout=5)
        assert missing.status == "HTTP_ERROR"
        await server.stop(0)
        with pytest.raises(ReaderUnavailable):
            await client.read("http://a.test/", timeout=5)
