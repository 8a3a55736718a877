"""RankPassages over a real grpc.aio server with the real embedding model (127.0.0.1)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Awaitable
from typing import TypeAlias

import grpc
import pytest
from quarry.v1 import ranker_pb2, ranker_pb2_grpc
from ranker.config import Settings
from ranker.server import build_server

pb = ranker_pb2
Stub: TypeAlias = "ranker_pb2_grpc.RankerAsyncStub"

TOWER = "\n\n".join(
    [
        "# The harbour",
        "The harbour has a small market every Saturday with fish and vegetables.",
        "Ferries leave for the islands twice a day in summer and once in winter.",
        "The old lighthouse rises 48 metres above the rocks at the harbour mouth.",
        "Its lamp was converted to electricity in 1921 and automated in 1987.",
    ]
)
BAKERY = "\n\n".join(
    [
        "# Bread",
        "The bakery on the square sells rye bread, cinnamon buns and cakes.",
        "It opens at six in the morning and closes when the bread runs out.",
    ]
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
async def stub(request: pytest.FixtureRequest) -> AsyncIterator[Stub]:
    dense = getattr(request, "param", True)
    server = build_server(Settings(port=0, dense=dense))
    port = await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            yield ranker_pb2_grpc.RankerStub(ch)
    finally:
        await server.stop(0)


def _pages(*, with_text: bool = True) -> list[pb.PassagePage]:
    return [
        pb.PassagePage(
            url=url, title=url, markdown=text if with_text else "", content_hash=_sha(text)
        )
        for url, text in (("https://tower.test/", TOWER), ("https://bakery.test/", BAKERY))
    ]


async def test_passages_are_ranked_by_bm25_and_dense_within_the_budget(stub: Stub) -> None:
    reply = await stub.RankPassages(
        pb.RankPassagesRequest(
            queries=["how tall is the lighthouse", "lighthouse height metres"],
            pages=_pages(),
            budget_tokens=60,
            passage_words=16,
        ),
        timeout=60,
    )
    assert reply.dense
    assert reply.passages
    assert "48 metres" in reply.passages[0].text
    assert reply.passages[0].url == "https://tower.test/"
    assert sum(p.tokens for p in reply.passages) <= 60
    assert reply.total_passages >= 5


async def test_known_pages_are_referred_to_by_hash(stub: Stub) -> None:
    first = pb.RankPassagesRequest(queries=["bread"], pages=_pages())
    await stub.RankPassages(first, timeout=60)
    again = await stub.RankPassages(
        pb.RankPassagesRequest(queries=["rye bread"], pages=_pages(with_text=False)), timeout=60
    )
    assert list(again.missing_urls) == []
    assert again.passages[0].url == "https://bakery.test/"
    unknown = pb.PassagePage(url="https://new.test/", content_hash=_sha("never sent"))
    reply = await stub.RankPassages(
        pb.RankPassagesRequest(queries=["bread"], pages=[unknown]), timeout=60
    )
    assert list(reply.missing_urls) == ["https://new.test/"]
    assert list(reply.passages) == []


@pytest.mark.parametrize("stub", [False], indirect=True)
async def test_without_the_model_ranking_is_bm25_only(stub: Stub) -> None:
    reply = await stub.RankPassages(
        pb.RankPassagesRequest(queries=["lighthouse"], pages=_pages()), timeout=60
    )
    assert not reply.dense
    assert "lighthouse" in reply.passages[0].text.lower()


async def _invalid(call: Awaitable[object]) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return str(info.value.details())


async def test_bad_requests_are_invalid_argument(stub: Stub) -> None:
    page = _pages()[0]
    cases = {
        "at least one": pb.RankPassagesRequest(queries=[" "], pages=[page]),
        "more than 8 queries": pb.RankPassagesRequest(queries=[f"q{i}" for i in range(9)]),
        "neither markdown nor content_hash": pb.RankPassagesRequest(
            queries=["x"], pages=[pb.PassagePage(url="https://a.test/")]
        ),
        "does not match": pb.RankPassagesRequest(
            queries=["x"],
            pages=[pb.PassagePage(url="https://a.test/", markdown="a", content_hash=_sha("b"))],
        ),
        "not a hex sha256": pb.RankPassagesRequest(
            queries=["x"], pages=[pb.PassagePage(url="https://a.test/", content_hash="xyz")]
        ),
        "budget_tokens": pb.RankPassagesRequest(queries=["x"], pages=[page], budget_tokens=0),
        "passage_words": pb.RankPassagesRequest(queries=["x"], pages=[page], passage_words=3),
        "url is empty": pb.RankPassagesRequest(queries=["x"], pages=[pb.PassagePage(markdown="a")]),
    }
    for needle, request in cases.items():
        assert needle in await _invalid(stub.RankPassages(request, timeout=10))


async def test_prepared_pages_are_ranked_by_hash_afterwards(stub: Stub) -> None:
    queries = ["how tall is the lighthouse", "bakery opening hours"]
    prepared = await stub.PreparePassages(
        pb.PreparePassagesRequest(
            queries=queries, pages=_pages(), passage_words=16, candidates_per_page=1
        ),
        timeout=60,
    )
    assert prepared.dense
    assert prepared.passages >= 5
    # One candidate per query and page, at most: 2 queries x 2 pages.
    assert 1 <= prepared.embedded <= 4
    assert list(prepared.missing_urls) == []
    # The pages were split and kept: RankPassages needs only their hashes now.
    reply = await stub.RankPassages(
        pb.RankPassagesRequest(queries=queries, pages=_pages(with_text=False), passage_words=16),
        timeout=60,
    )
    assert list(reply.missing_urls) == []
    assert reply.dense
    assert {p.url for p in reply.passages} == {"https://tower.test/", "https://bakery.test/"}


async def test_preparing_unknown_or_bad_pages(stub: Stub) -> None:
    unknown = pb.PassagePage(url="https://new.test/", content_hash=_sha("never sent"))
    reply = await stub.PreparePassages(
        pb.PreparePassagesRequest(queries=["bread"], pages=[unknown]), timeout=60
    )
    assert list(reply.missing_urls) == ["https://new.test/"]
    assert (reply.passages, reply.embedded) == (0, 0)
    bad = pb.PreparePassagesRequest(queries=["  "], pages=_pages())
    assert "at least one" in await _invalid(stub.PreparePassages(bad, timeout=60))


@pytest.mark.parametrize("stub", [False], indirect=True)
async def test_preparing_without_the_model_only_splits(stub: Stub) -> None:
    reply = await stub.PreparePassages(
        pb.PreparePassagesRequest(queries=["lighthouse"], pages=_pages()), timeout=60
    )
    assert not reply.dense
    assert reply.embedded == 0
    assert reply.passages >= 2
