"""The rerank step and CheckSupport over a real grpc.aio server with the real model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TypeAlias

import grpc
import pytest
from quarry.v1 import ranker_pb2, ranker_pb2_grpc
from ranker.config import Settings
from ranker.server import build_server

pb = ranker_pb2
Stub: TypeAlias = "ranker_pb2_grpc.RankerAsyncStub"

LIMITS = "\n\n".join(
    [
        "# Limits",
        "SQLite was designed to avoid arbitrary limits, but every program has some.",
        "The default setting for SQLITE_MAX_COLUMN is 2000. You can raise it at compile time to "
        "32767.",
        "The maximum number of bytes in a string or BLOB is SQLITE_MAX_LENGTH, 1 billion.",
        "Attached databases are limited to 10 by default and 125 at most.",
    ]
)
PASSAGE = LIMITS.split("\n\n")[2]


@pytest.fixture
async def stub(request: pytest.FixtureRequest) -> AsyncIterator[Stub]:
    settings = getattr(request, "param", {"rerank": True})
    server = build_server(Settings(port=0, **settings))
    port = await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            yield ranker_pb2_grpc.RankerStub(ch)
    finally:
        await server.stop(0)


def _request() -> pb.RankPassagesRequest:
    return pb.RankPassagesRequest(
        queries=["What is the default maximum number of columns?"],
        pages=[pb.PassagePage(url="https://limits.test/", title="Limits", markdown=LIMITS)],
        passage_words=16,
    )


async def test_rank_passages_reranks_when_on(stub: Stub) -> None:
    reply = await stub.RankPassages(_request(), timeout=120)
    assert reply.reranked, reply.rerank_note
    assert reply.rerank_note == ""
    assert "2000" in reply.passages[0].text


@pytest.mark.parametrize(
    ("stub", "note"),
    [({"rerank": False}, "off"), ({"rerank": True, "dense": False}, "model unavailable")],
    indirect=["stub"],
)
async def test_rank_passages_says_why_it_did_not_rerank(stub: Stub, note: str) -> None:
    reply = await stub.RankPassages(_request(), timeout=120)
    assert not reply.reranked
    assert reply.rerank_note == note
    assert reply.passages


async def test_check_support_scores_each_claim_against_its_best_passage(stub: Stub) -> None:
    claims = [
        pb.SupportClaim(sentence="SQLITE_MAX_COLUMN defaults to 2000.", passages=["x", PASSAGE]),
        pb.SupportClaim(sentence="SQLITE_MAX_COLUMN defaults to 32000.", passages=[PASSAGE]),
        pb.SupportClaim(sentence="Bananas are yellow.", passages=[PASSAGE]),
        pb.SupportClaim(sentence="Uncited claim.", passages=[]),
    ]
    reply = await stub.CheckSupport(pb.CheckSupportRequest(claims=claims), timeout=120)
    right, wrong, off_topic, uncited = reply.verdicts
    assert (right.label, right.best_passage) == ("supported", 1)
    assert wrong.label != "supported"
    assert off_topic.label == "unsupported"
    assert (uncited.label, uncited.best_passage, uncited.score) == ("unsupported", -1, 0.0)
    assert 0.0 <= off_topic.score < wrong.score < right.score <= 1.0


async def test_check_support_rejects_bad_claims(stub: Stub) -> None:
    for request in (
        pb.CheckSupportRequest(claims=[pb.SupportClaim(sentence="  ", passages=["p"])]),
        pb.CheckSupportRequest(claims=[pb.SupportClaim(sentence="s", passages=["p"])] * 65),
        pb.CheckSupportRequest(claims=[pb.SupportClaim(sentence="s", passages=["p"] * 9)]),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.CheckSupport(request, timeout=60)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("stub", [{"dense": False}], indirect=True)
async def test_check_support_without_the_model_is_unavailable(stub: Stub) -> None:
    claim = pb.SupportClaim(sentence="s", passages=["p"])
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CheckSupport(pb.CheckSupportRequest(claims=[claim]), timeout=60)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
