"""The Ranker over a real grpc.aio server on 127.0.0.1 (port 0), including every bound."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc
from ranker.config import Settings
from ranker.server import SERVICE_NAME, build_server

pb = ranker_pb2


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    server = build_server(Settings(port=0))
    port = await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            yield ch
    finally:
        await server.stop(0)


@pytest.fixture
def stub(channel: grpc.aio.Channel) -> ranker_pb2_grpc.RankerAsyncStub:
    return ranker_pb2_grpc.RankerStub(channel)


def _result(i: int, title: str, snippet: str = "") -> pb.SearchResult:
    return pb.SearchResult(
        url=f"https://site{i}.org/", title=title, snippet=snippet, engine_rank=i, engines=["e"]
    )


async def _invalid(call: Awaitable[object]) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return str(info.value.details())


async def test_health_is_serving(channel: grpc.aio.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_rank_results_fuses_with_defaults(stub: ranker_pb2_grpc.RankerAsyncStub) -> None:
    request = pb.RankResultsRequest(
        query="install python",
        results=[
            _result(1, "Cooking pasta"),
            _result(2, "Weather"),
            _result(3, "Installing Python", "apt install python3"),
            pb.SearchResult(url="https://SITE1.org/#x", title="dup", engine_rank=9, engines=["b"]),
        ],
    )
    reply = await stub.RankResults(request, timeout=10)
    assert reply.total == 3
    assert [r.result.url for r in reply.results] == [
        "https://site3.org/",
        "https://site1.org/",
        "https://site2.org/",
    ]
    top = reply.results[0]
    assert top.HasField("lexical_rank")
    assert top.lexical_rank == 1
    assert top.rrf_score == pytest.approx(1 / 63 + 1 / 61)  # rrf_k defaults to 60
    assert top.bm25f_score > 0
    assert not reply.results[1].HasField("lexical_rank")
    assert list(reply.results[1].result.engines) == ["e", "b"]
    assert [r.rank for r in reply.results] == [1, 2, 3]


async def test_rank_results_options_and_empty_inputs(stub: ranker_pb2_grpc.RankerAsyncStub) -> None:
    results = [_result(1, "nothing", "rust"), _result(2, "rust", "nothing")]
    reply = await stub.RankResults(
        pb.RankResultsRequest(query="rust", results=results, top_k=1, title_weight=0, rrf_k=0),
        timeout=10,
    )
    assert reply.total == 2
    assert len(reply.results) == 1
    # Title weight 0: only result 1's snippet matches; k = 0 gives 1/1 + 1/1.
    assert reply.results[0].result.engine_rank == 1
    assert reply.results[0].rrf_score == pytest.approx(2.0)
    empty = await stub.RankResults(pb.RankResultsRequest(query="", results=results), timeout=10)
    assert [r.result.engine_rank for r in empty.results] == [1, 2]
    none = await stub.RankResults(pb.RankResultsRequest(query="rust"), timeout=10)
    assert (none.total, len(none.results)) == (0, 0)


async def test_rank_chunks(stub: ranker_pb2_grpc.RankerAsyncStub) -> None:
    text = "# Venv\n\nPython venv guide, the long version."
    pages = [
        pb.Page(url="https://a.org/", title="A", markdown=text),
        pb.Page(
            url="https://b.org/",
            title="B",
            markdown="# venv\n\npython VENV guide: the long version!",
        ),
        pb.Page(url="https://c.org/", title="C", markdown="Rust lifetimes."),
    ]
    reply = await stub.RankChunks(
        pb.RankChunksRequest(query="python venv", pages=pages, chunk_words=16), timeout=10
    )
    # b.org's page is a.org's passage syndicated: kept once.
    assert reply.total_chunks == 2
    assert [(c.url, c.title, c.index, c.text) for c in reply.chunks] == [
        ("https://a.org/", "A", 0, text),
        ("https://c.org/", "C", 0, "Rust lifetimes."),
    ]
    assert reply.chunks[0].score > 0.0
    assert reply.chunks[1].score == 0.0
    many = "\n\n".join(f"Paragraph {i} is about python." for i in range(10))
    one_page = [pb.Page(url="https://a.org/", title="A", markdown=many)]
    every = await stub.RankChunks(
        pb.RankChunksRequest(query="", pages=one_page, chunk_words=16, top_k=0, one_per_url=False),
        timeout=10,
    )
    assert [c.index for c in every.chunks] == [0, 1, 2, 3]  # 5-word paragraphs, 3 a chunk
    default = await stub.RankChunks(pb.RankChunksRequest(query="x", pages=one_page), timeout=10)
    assert default.total_chunks == 1  # 500-word default chunks


async def test_result_bounds(stub: ranker_pb2_grpc.RankerAsyncStub) -> None:
    many = [_result(i, "t") for i in range(1, 502)]
    assert "500 results" in await _invalid(
        stub.RankResults(pb.RankResultsRequest(query="q", results=many), timeout=10)
    )
    ok = await stub.RankResults(pb.RankResultsRequest(query="t", results=many[:500]), timeout=10)
    assert ok.total == 500
    long_query = " ".join(["word"] * 129)
    assert "128 tokens" in await _invalid(
        stub.RankResults(pb.RankResultsRequest(query=long_query), timeout=10)
    )
    assert "4096 characters" in await _invalid(
        stub.RankResults(pb.RankResultsRequest(query="x" * 5000), timeout=10)
    )
    for weight in (-1.0, float("nan"), 101.0):
        assert "title_weight" in await _invalid(
            stub.RankResults(pb.RankResultsRequest(query="q", title_weight=weight), timeout=10)
        )
    assert "snippet_weight" in await _invalid(
        stub.RankResults(pb.RankResultsRequest(query="q", snippet_weight=-2), timeout=10)
    )
    long_snippet = pb.SearchResult(url="https://a/", snippet="x " * 5001)
    assert "results[0].snippet is longer than 10000" in await _invalid(
        stub.RankResults(pb.RankResultsRequest(query="q", results=[long_snippet]), timeout=10)
    )
    long_title = pb.SearchResult(url="https://a/", title="t" * 2001)
    assert "results[0].title" in await _invalid(
        stub.RankResults(pb.RankResultsRequest(query="q", results=[long_title]), timeout=10)
    )
    long_url = pb.SearchResult(url="https://a/" + "p" * 8200)
    assert "results[0].url is longer" in await _invalid(
        stub.RankResults(pb.RankResultsRequest(query="q", results=[long_url]), timeout=10)
    )
    assert "results[1].url" in await _invalid(
        stub.RankResults(
            pb.RankResultsRequest(query="q", results=[_result(1, "a"), pb.SearchResult()]),
            timeout=10,
        )
    )


async def test_chunk_bounds(stub: ranker_pb2_grpc.RankerAsyncStub) -> None:
    pages = [pb.Page(url=f"https://p{i}.org/", markdown="text") for i in range(201)]
    assert "200 pages" in await _invalid(
        stub.RankChunks(pb.RankChunksRequest(query="q", pages=pages), timeout=10)
    )
    ok = await stub.RankChunks(pb.RankChunksRequest(query="q", pages=pages[:200]), timeout=10)
    assert ok.total_chunks == 1  # the same text on every page: kept once
    # 20,001 distinct 16-word paragraphs at chunk_words=16: one chunk each.
    paras = "\n\n".join(" ".join(f"w{i}x{j}" for j in range(16)) for i in range(20_001))
    big = pb.RankChunksRequest(query="q", pages=[pb.Page(url="https://a/", markdown=paras)])
    big.chunk_words = 16
    assert "20000 chunks" in await _invalid(stub.RankChunks(big, timeout=60))
    for words in (0, 15, 10_001):
        assert "chunk_words" in await _invalid(
            stub.RankChunks(pb.RankChunksRequest(query="q", chunk_words=words), timeout=10)
        )
    assert "128 tokens" in await _invalid(
        stub.RankChunks(pb.RankChunksRequest(query="a " * 129), timeout=10)
    )
    long_url = pb.Page(url="https://a/" + "p" * 8200)
    assert "pages[0].url is longer" in await _invalid(
        stub.RankChunks(pb.RankChunksRequest(query="q", pages=[long_url]), timeout=10)
    )
    assert "pages[0].url" in await _invalid(
        stub.RankChunks(pb.RankChunksRequest(query="q", pages=[pb.Page(url=" ")]), timeout=10)
    )


async def test_health_answers_during_chunk_ranking(channel: grpc.aio.Channel) -> None:
    stub = ranker_pb2_grpc.RankerStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    text = "\n\n".join(f"paragraph {i} about python and rust" for i in range(5000))
    request = pb.RankChunksRequest(query="python", pages=[pb.Page(url="https://a/", markdown=text)])
    ranking = asyncio.ensure_future(stub.RankChunks(request, timeout=60))
    status = await health.Check(health_pb2.HealthCheckRequest(), timeout=30)
    reply = await ranking
    assert status.status == health_pb2.HealthCheckResponse.SERVING
    assert reply.total_chunks > 0


async def test_a_missed_deadline_leaves_the_server_healthy(
    stub: ranker_pb2_grpc.RankerAsyncStub,
) -> None:
    text = "\n\n".join(f"paragraph {i} about python and rust" for i in range(20_000))
    request = pb.RankChunksRequest(query="python", pages=[pb.Page(url="https://a/", markdown=text)])
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.RankChunks(request, timeout=0.001)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    small = pb.RankChunksRequest(
        query="python", pages=[pb.Page(url="https://b/", markdown="python")]
    )
    reply = await stub.RankChunks(small, timeout=30)
    assert [c.url for c in reply.chunks] == ["https://b/"]
