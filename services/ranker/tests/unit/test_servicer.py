"""The servicer's worker-thread slots and proto mapping, without a server."""

from __future__ import annotations

import asyncio
import threading

import pytest
from quarry.v1 import ranker_pb2
from quarry_text.analyzer import Analyzer
from ranker.config import Settings
from ranker.errors import BoundExceededError, InvalidRequestError
from ranker.service import RankerServicer, chunks_from_proto, results_from_proto


async def test_a_cancelled_call_keeps_its_cpu_slot_until_the_thread_ends() -> None:
    servicer = RankerServicer(Settings(port=0, cpu_concurrency=1))
    release = threading.Event()
    started = threading.Event()

    def work() -> int:
        started.set()
        release.wait(10)
        return 1

    call = asyncio.ensure_future(servicer._in_thread(work))
    assert await asyncio.to_thread(started.wait, 10)
    call.cancel()
    second = asyncio.ensure_future(servicer._in_thread(lambda: 2))
    await asyncio.sleep(0.05)
    assert not second.done()  # the one slot still belongs to the running thread
    release.set()
    assert await second == 2
    with pytest.raises(asyncio.CancelledError):
        await call


def test_mapping_applies_contract_defaults() -> None:
    analyzer = Analyzer()
    _, rp = results_from_proto(analyzer, ranker_pb2.RankResultsRequest(query="q"))
    assert (rp.title_weight, rp.snippet_weight, rp.rrf_k, rp.top_k) == (2.0, 1.0, 60, 0)
    _, cp = chunks_from_proto(analyzer, ranker_pb2.RankChunksRequest(query="q"))
    assert (cp.top_k, cp.chunk_words, cp.one_per_url) == (8, 500, True)
    explicit = ranker_pb2.RankChunksRequest(query="q", top_k=0, one_per_url=False)
    _, cp = chunks_from_proto(analyzer, explicit)
    assert (cp.top_k, cp.one_per_url) == (0, False)


def test_bounds_are_domain_errors() -> None:
    analyzer = Analyzer()
    with pytest.raises(BoundExceededError, match="128 tokens"):
        results_from_proto(analyzer, ranker_pb2.RankResultsRequest(query="数" * 129))
    with pytest.raises(InvalidRequestError, match="snippet_weight"):
        results_from_proto(analyzer, ranker_pb2.RankResultsRequest(snippet_weight=float("inf")))


def test_rank_passages_cap_defaults_to_the_budgets_share_and_an_explicit_cap_stands() -> None:
    from ranker.passages import PassageParams
    from ranker.passages_rpc import params_from_proto

    analyzer = Analyzer()

    def cap(budget: int, max_per_page: int | None = None) -> int:
        request = ranker_pb2.RankPassagesRequest(
            queries=["q"], budget_tokens=budget, max_per_page=max_per_page
        )
        return params_from_proto(analyzer, request, PassageParams())[1].max_per_page

    assert cap(900) == 4
    assert cap(5000) == 12
    assert cap(5000, max_per_page=2) == 2
