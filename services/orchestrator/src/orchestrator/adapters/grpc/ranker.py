"""The ranker adapter (agent port Ranker): quarry.v1.Ranker results reranking and passages."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Sequence

import grpc
from cachetools import LRUCache
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc

from orchestrator.core.ask.domain import (
    PageText,
    Passage,
    RankerUnavailable,
    SearchHit,
    SupportVerdict,
)

logger = logging.getLogger(__name__)

# Pages this process believes the ranker holds, by (url, sha256): sent by reference. The
# ranker's own cache is bounded too, so a stale belief costs one resend, never an error.
KNOWN_PAGES = 4096
# The ranker's bound on queries per RankPassages call.
MAX_QUERIES = 8


class RankerClient:
    """Calls the ranker; at most ``limit`` calls in flight process-wide."""

    def __init__(self, channel: grpc.aio.Channel, *, limit: asyncio.Semaphore) -> None:
        self._stub = ranker_pb2_grpc.RankerStub(channel)
        self._health = health_pb2_grpc.HealthStub(channel)
        self._limit = limit
        # Least recently sent first out (cachetools' LRUCache: docs/architecture.md).
        self._known: LRUCache[tuple[str, str], None] = LRUCache(KNOWN_PAGES)

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

    async def rank_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        budget_tokens: int,
        passage_words: int,
        timeout: float,
    ) -> list[Passage]:
        """RankPassages: a page's text crosses the wire once; afterwards only its hash does
        (pages the ranker no longer holds come back as ``missing_urls`` and are resent once).

        Raises:
            RankerUnavailable: on any gRPC error or a timeout.
        """
        hashes = [_sha256(p.markdown) for p in pages]
        wanted = list(dict.fromkeys(q for q in queries if q.strip()))[:MAX_QUERIES]
        resend: set[str] = set()
        for _ in range(2):
            msgs = [
                ranker_pb2.PassagePage(
                    url=p.url,
                    title=p.title,
                    content_hash=h,
                    markdown=p.markdown if p.url in resend or (p.url, h) not in self._known else "",
                )
                for p, h in zip(pages, hashes, strict=True)
            ]
            request = ranker_pb2.RankPassagesRequest(
                queries=wanted, pages=msgs, budget_tokens=budget_tokens, passage_words=passage_words
            )
            try:
                async with self._limit:
                    reply = await self._stub.RankPassages(request, timeout=timeout)
            except grpc.aio.AioRpcError as err:
                raise _unavailable(err) from None
            for m in msgs:
                self._remember((m.url, m.content_hash))
            if not reply.missing_urls:
                break
            resend = set(reply.missing_urls)
            for url, h in zip([p.url for p in pages], hashes, strict=True):
                if url in resend:
                    self._known.pop((url, h), None)
        return [Passage(c.url, c.title, c.text, c.score, c.index) for c in reply.passages]

    async def prepare_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        passage_words: int,
        timeout: float,
    ) -> None:
        """PreparePassages: the pages' texts cross the wire here (the later RankPassages
        refers to them by hash); not bounded by ``limit``: the ranker runs these calls in
        its own, smaller pool, behind RankPassages.

        Raises:
            RankerUnavailable: on any gRPC error or a timeout.
        """
        hashes = [_sha256(p.markdown) for p in pages]
        msgs = [
            ranker_pb2.PassagePage(
                url=p.url,
                title=p.title,
                content_hash=h,
                markdown="" if (p.url, h) in self._known else p.markdown,
            )
            for p, h in zip(pages, hashes, strict=True)
        ]
        request = ranker_pb2.PreparePassagesRequest(
            queries=list(dict.fromkeys(q for q in queries if q.strip()))[:MAX_QUERIES],
            pages=msgs,
            passage_words=passage_words,
        )
        try:
            reply = await self._stub.PreparePassages(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _unavailable(err) from None
        missing = set(reply.missing_urls)
        for m in msgs:
            if m.url in missing:  # evicted: the RankPassages call sends its text again
                self._known.pop((m.url, m.content_hash), None)
            else:
                self._remember((m.url, m.content_hash))

    async def check_support(
        self, claims: Sequence[tuple[str, Sequence[str]]], *, timeout: float
    ) -> list[SupportVerdict]:
        """CheckSupport: every claim of one answer in one call.

        Raises:
            RankerUnavailable: on any gRPC error or a timeout.
        """
        request = ranker_pb2.CheckSupportRequest(
            claims=[
                ranker_pb2.SupportClaim(sentence=sentence, passages=list(passages))
                for sentence, passages in claims
            ]
        )
        try:
            async with self._limit:
                reply = await self._stub.CheckSupport(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _unavailable(err) from None
        if len(reply.verdicts) != len(claims):
            raise RankerUnavailable("BAD_REPLY")
        return [SupportVerdict(v.score, v.label) for v in reply.verdicts]

    def _remember(self, key: tuple[str, str]) -> None:
        self._known[key] = None  # now the most recent; the least recent go past KNOWN_PAGES

    async def ping(self, *, timeout: float) -> bool:
        """True when the ranker's health service reports SERVING."""
        try:
            reply = await self._health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _unavailable(err: grpc.aio.AioRpcError) -> RankerUnavailable:
    logger.warning("ranker call failed", extra={"grpc_code": err.code().name})
    return RankerUnavailable(err.code().name)
