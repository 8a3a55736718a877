"""The reader and ranker clients against real grpc.aio servers that misbehave on purpose."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest
from orchestrator.adapters.grpc.ranker import RankerClient
from orchestrator.adapters.grpc.reader import ReaderClient
from orchestrator.core.ask.domain import (
    PageText,
    RankerUnavailable,
    ReaderUnavailable,
    SearchHit,
    SupportVerdict,
)
from quarry.v1 import ranker_pb2, reader_pb2

from services.orchestrator.tests.unit.corpus_doubles import FakeCorpusRanker
from services.orchestrator.tests.unit.doubles import FakeReader, grpc_server
from tests.conftest import free_port


class FlakyReader(FakeReader):
    """Answers each URL's first call with ``first`` (a gRPC code or a ReadResponse status)."""

    def __init__(self, first: grpc.StatusCode | str) -> None:
        super().__init__({"http://a.test/": ("A", "text")})
        self.first = first

    async def Read(
        self,
        request: reader_pb2.ReadRequest,
        context: grpc.aio.ServicerContext[reader_pb2.ReadRequest, reader_pb2.ReadResponse],
    ) -> reader_pb2.ReadResponse:
        if self.calls.count(request.url) == 0:
            self.calls.append(request.url)
            if isinstance(self.first, grpc.StatusCode):
                await context.abort(self.first, "scripted")
            return reader_pb2.ReadResponse(url=request.url, status=self.first)
        return await super().Read(request, context)


@asynccontextmanager
async def reader_client(
    servicer: FakeReader | None, retry_delay_s: float = 0.01
) -> AsyncIterator[ReaderClient]:
    """A client for ``servicer`` on a real server (None: nothing listens)."""
    server = grpc_server(servicer) if servicer is not None else None
    port = await server.start() if server is not None else free_port()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield ReaderClient(channel, limit=asyncio.Semaphore(4), retry_delay_s=retry_delay_s)
    finally:
        await channel.close()
        if server is not None:
            await server.stop(0)


@pytest.mark.parametrize("first", [grpc.StatusCode.UNAVAILABLE, "NETWORK_ERROR"])
async def test_one_retry_after_a_network_error(first: grpc.StatusCode | str) -> None:
    servicer = FlakyReader(first)
    async with reader_client(servicer) as client:
        page = await client.read("http://a.test/", timeout=5)
    assert (page.status, page.attempts, page.markdown) == ("OK", 2, "text")
    assert page.usable


@pytest.mark.parametrize("first", [grpc.StatusCode.UNAVAILABLE, "NETWORK_ERROR"])
async def test_no_retry_without_time_for_it(first: grpc.StatusCode | str) -> None:
    # The pause before the retry (60 s) would outlast the read's budget (5 s): the first
    # answer stands (the reader down, or the network error as it came).
    async with reader_client(FlakyReader(first), retry_delay_s=60) as client:
        if first == "NETWORK_ERROR":
            page = await client.read("http://a.test/", timeout=5)
            assert (page.status, page.attempts) == ("NETWORK_ERROR", 1)
        else:
            with pytest.raises(ReaderUnavailable):
                await client.read("http://a.test/", timeout=5)


async def test_other_failures_are_not_retried() -> None:
    servicer = FlakyReader("BLOCKED")
    async with reader_client(servicer) as client:
        page = await client.read("http://a.test/", timeout=5)
    assert (page.status, page.attempts, page.usable) == ("BLOCKED", 1, False)


async def test_a_slow_read_becomes_a_timeout_within_its_budget() -> None:
    servicer = FakeReader({"http://a.test/": ("A", "text")}, delay=30)
    async with reader_client(servicer) as client:
        page = await asyncio.wait_for(client.read("http://a.test/", timeout=0.3), 30)
        # The server learns of the cancellation a moment later: wait for it, not for 0.1 s.
        async with asyncio.timeout(30):
            while servicer.cancelled < 1:  # noqa: ASYNC110 - a counter, no event to await
                await asyncio.sleep(0.01)
    assert page.status == "TIMEOUT"
    assert servicer.cancelled == 1


async def test_reader_down_raises_after_its_retry() -> None:
    async with reader_client(None) as client:
        with pytest.raises(ReaderUnavailable) as err:
            await asyncio.wait_for(client.read("http://a.test/", timeout=5), 5)
        assert not await client.ping(timeout=0.5)
    assert err.value.code == "UNAVAILABLE"


async def test_ranker_client_round_trip_and_failure() -> None:
    server = grpc_server(FakeCorpusRanker())
    port = await server.start()
    hits = [
        SearchHit("http://a.test/", "cats", "about cats", 1),
        SearchHit("http://b.test/", "dogs", "about dogs", 2),
    ]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = RankerClient(channel, limit=asyncio.Semaphore(2))
        ranked = await client.rank_results("dogs", hits, top_k=10, timeout=5)
        chunks = await client.rank_chunks(
            "dogs", [PageText("http://b.test/", "dogs", "dogs bark")], top_k=8, timeout=5
        )
        assert await client.ping(timeout=1)
        await server.stop(0)
        with pytest.raises(RankerUnavailable):
            await client.rank_results("dogs", hits, top_k=10, timeout=1)
    assert [h.url for h in ranked] == ["http://b.test/", "http://a.test/"]
    assert ranked[0] is hits[1]
    assert [(c.url, c.text) for c in chunks] == [("http://b.test/", "dogs bark")]


async def test_rank_passages_sends_a_pages_text_once_and_resends_what_the_ranker_lost() -> None:
    fake = FakeCorpusRanker()
    server = grpc_server(fake)
    port = await server.start()
    pages = [PageText("http://a.test/", "A", "cats purr"), PageText("http://b.test/", "B", "dogs")]
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = RankerClient(channel, limit=asyncio.Semaphore(2))

            async def rank() -> list[str]:
                found = await client.rank_passages(
                    ["cats"], pages, budget_tokens=500, passage_words=120, timeout=5
                )
                return [p.url for p in found]

            assert await rank() == ["http://a.test/", "http://b.test/"]
            assert await rank() == ["http://a.test/", "http://b.test/"]
            fake.known.clear()  # the ranker restarted
            assert await rank() == ["http://a.test/", "http://b.test/"]
    finally:
        await server.stop(0)
    assert fake.sent_text == [[True, True], [False, False], [False, False], [True, True]]


async def test_prepared_pages_are_then_ranked_by_hash_alone() -> None:
    fake = FakeCorpusRanker()
    server = grpc_server(fake)
    port = await server.start()
    pages = [PageText("http://a.test/", "A", "cats purr"), PageText("http://b.test/", "B", "dogs")]
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = RankerClient(channel, limit=asyncio.Semaphore(2))
            await client.prepare_passages(["cats"], pages[:1], passage_words=120, timeout=5)
            found = await client.rank_passages(
                ["cats"], pages, budget_tokens=500, passage_words=120, timeout=5
            )
            await server.stop(0)
            with pytest.raises(RankerUnavailable):
                await client.prepare_passages(["cats"], pages, passage_words=120, timeout=1)
    finally:
        await server.stop(0)
    assert fake.prepared == [[True]]
    # The prepared page crosses the wire once; the other one with the ranking call.
    assert fake.sent_text == [[False, True]]
    assert [p.url for p in found] == ["http://a.test/", "http://b.test/"]


class _SupportRanker(FakeCorpusRanker):
    """A ranker with a support model: a claim is supported when a cited passage holds it."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ranker_pb2.CheckSupportRequest] = []

    async def CheckSupport(self, request: Any, context: Any) -> ranker_pb2.CheckSupportResponse:
        self.requests.append(request)
        reply = ranker_pb2.CheckSupportResponse()
        for claim in request.claims:
            held = [claim.sentence.rstrip(".") in p for p in claim.passages]
            best = held.index(True) if any(held) else -1
            label = "supported" if best >= 0 else "unsupported"
            reply.verdicts.add(score=1.0 if best >= 0 else 0.0, label=label, best_passage=best)
        return reply


async def test_every_claim_of_an_answer_is_checked_in_one_call() -> None:
    fake = _SupportRanker()
    server = grpc_server(fake)
    port = await server.start()
    claims = [("Cats purr.", ["Dogs bark.", "Cats purr."]), ("Cats bark.", ["Dogs bark."])]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = RankerClient(channel, limit=asyncio.Semaphore(2))
        got = await client.check_support(claims, timeout=5)
    await server.stop(0)
    assert got == [SupportVerdict(1.0, "supported"), SupportVerdict(0.0, "unsupported")]
    assert len(fake.requests) == 1


async def test_a_ranker_without_the_support_model_is_unavailable_for_support() -> None:
    server = grpc_server(FakeCorpusRanker())  # CheckSupport answers UNIMPLEMENTED
    port = await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = RankerClient(channel, limit=asyncio.Semaphore(2))
        with pytest.raises(RankerUnavailable):
            await client.check_support([("Cats purr.", ["Cats purr."])], timeout=5)
    await server.stop(0)


async def test_pages_the_ranker_holds_are_remembered_within_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from orchestrator.adapters.grpc import ranker as ranker_module

    monkeypatch.setattr(ranker_module, "KNOWN_PAGES", 2)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{free_port()}") as channel:
        client = RankerClient(channel, limit=asyncio.Semaphore(1))
        for url in ("a", "b", "c"):
            client._remember((url, "h"))
        assert set(client._known) == {("b", "h"), ("c", "h")}  # the oldest went
