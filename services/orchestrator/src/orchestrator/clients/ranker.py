"""The ranker adapter (agent port Ranker): quarry.v1.Ranker results reranking and passages."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc

from orchestrator.agent.domain import PageText, Passage, RankerUnavailable, SearchHit

logger = logging.getLogger(__name__)


class RankerClient:
    """Calls the ranker; at most ``limit`` calls in flight process-wide."""

    def __init__(self, channel: grpc.aio.Channel, *, limit: asyncio.Semaphore) -> None:
        self._stub = ranker_pb2_grpc.RankerStub(channel)
        self._health = health_pb2_grpc.HealthStub(channel)
        self._limit = limit

    async def rank_results(
        self, query: str, hits: Sequence[SearchHit], *, top_k: int, timeout: float
    ) -> list[SearchHit]:
        """Return ``hits`` reranked (deduplicated by URL), best first, at most ``top_k``.

        Raises:
            RankerUnavailable: on any gRPC error or a timeout.
        """
        request = ranker_pb2.RankResultsRequest(
            query=query,
            top_k=top_k,
            results=[
                ranker_pb2.SearchResult(
                    url=h.url,
                    title=h.title,
                    snippet=h.snippet,
                    engine_rank=h.engine_rank,
                    engines=list(h.engines),
                    published=h.published,
                    source=h.source,
                )
                for h in hits
            ],
        )
        try:
            async with self._limit:
                reply = await self._stub.RankResults(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _unavailable(err) from None
        by_url = {h.url: h for h in hits}
        ranked: list[SearchHit] = []
        for item in reply.results:
            r = item.result
            ranked.append(
                by_url.get(r.url)
                or SearchHit(
                    r.url,
                    r.title,
                    r.snippet,
                    r.engine_rank,
                    tuple(r.engines),
                    r.published,
                    source=r.source or "web",
                )
            )
        return ranked

    async def rank_chunks(
        self, query: str, pages: Sequence[PageText], *, top_k: int, timeout: float
    ) -> list[Passage]:
        """Return the best ``top_k`` passages over ``pages``, one per URL.

        Raises:
            RankerUnavailable: on any gRPC error or a timeout.
        """
        request = ranker_pb2.RankChunksRequest(
            query=query,
            top_k=top_k,
            one_per_url=True,
            pages=[ranker_pb2.Page(url=p.url, title=p.title, markdown=p.markdown) for p in pages],
        )
        try:
            async with self._limit:
                reply = await self._stub.RankChunks(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _unavailable(err) from None
        return [Passage(c.url, c.title, c.text, c.score) for c in reply.chunks]

    async def ping(self, *, timeout: float) -> bool:
        """True when the ranker's health service reports SERVING."""
        try:
            reply = await self._health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _unavailable(err: grpc.aio.AioRpcError) -> RankerUnavailable:
    logger.warning("ranker call failed", extra={"grpc_code": err.code().name})
    return RankerUnavailable(err.code().name)
