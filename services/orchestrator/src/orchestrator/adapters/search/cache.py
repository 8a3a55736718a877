"""Search-response caches, keyed by query and options: a small in-memory TTL cache (one
process; cachetools' ``TTLCache``, the project's one cache library: docs/architecture.md), or
Redis (``ORCHESTRATOR_REDIS_URL``: every replica shares one).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any, Protocol

import orjson
from cachetools import TTLCache

from orchestrator.core.ask.domain import SearchHit, SearchResponse

logger = logging.getLogger(__name__)

Key = tuple[str, ...]


class SearchCache:
    """Responses for ``ttl_s`` seconds, at most ``size`` of them (least recently used go)."""

    def __init__(
        self, *, ttl_s: float, size: int = 512, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl_s
        self._items: TTLCache[Key, SearchResponse] = TTLCache(size, max(ttl_s, 0.0), timer=clock)

    def get(self, key: Key) -> SearchResponse | None:
        """The cached response (marked ``cached``), or None when absent or expired."""
        response = self._items.get(key)
        return None if response is None else replace(response, cached=True)

    def put(self, key: Key, response: SearchResponse) -> None:
        """Keep ``response`` (only responses with results are worth keeping)."""
        if self._ttl <= 0 or not response.hits:
            return
        self._items[key] = response

    async def lookup(self, key: Key) -> SearchResponse | None:
        """``get``, as the search service calls every cache (ResultCache)."""
        return self.get(key)

    async def store(self, key: Key, response: SearchResponse) -> None:
        """``put``, as the search service calls every cache (ResultCache)."""
        self.put(key, response)


class ResultCache(Protocol):
    """What the search service needs of a cache (in memory, or shared through Redis)."""

    async def lookup(self, key: Key) -> SearchResponse | None:
        """The cached response (marked ``cached``), or None."""
        ...

    async def store(self, key: Key, response: SearchResponse) -> None:
        """Keep ``response`` for the cache's TTL."""
        ...


def normalised(key: Key) -> str:
    """The shared cache's key: the query case-folded with its whitespace collapsed (so "What
    is X" and "what  is x" share an entry), then the options and backends as they are."""
    query, *rest = key or ("",)
    text = " ".join(query.casefold().split())
    digest = hashlib.sha256("\x1f".join([text, *rest]).encode()).hexdigest()
    return f"quarry-search:{digest}"


class RedisSearchCache:
    """Search responses in Redis for ``ttl_s`` (Redis expires them), shared by every replica.

    Redis evicts by its own ``maxmemory-policy``; no LRU bound here. A Redis that fails is a
    miss (or a lost entry), never a failed search.
    """

    def __init__(self, client: Any, ttl_s: float) -> None:
        self._client = client
        self._ttl_ms = max(1, int(ttl_s * 1000))

    async def lookup(self, key: Key) -> SearchResponse | None:
        """The cached response (marked ``cached``), or None."""
        try:
            raw = await self._client.get(normalised(key))
        except Exception:
            logger.warning("the shared search cache failed", exc_info=True)
            return None
        return None if raw is None else _decode(raw)

    async def store(self, key: Key, response: SearchResponse) -> None:
        """Keep ``response`` (only responses with results are worth keeping)."""
        if not response.hits:
            return
        try:
            await self._client.set(normalised(key), _encode(response), px=self._ttl_ms)
        except Exception:
            logger.warning("the shared search cache failed", exc_info=True)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()


def _encode(response: SearchResponse) -> bytes:
    return orjson.dumps(asdict(response))


def _decode(raw: bytes) -> SearchResponse:
    data = orjson.loads(raw)
    hits = [SearchHit(**{**h, "engines": tuple(h["engines"])}) for h in data.pop("hits")]
    reasons = [tuple(r) for r in data.pop("unresponsive_reasons")]
    return SearchResponse(hits, unresponsive_reasons=reasons, **{**data, "cached": True})


def search_cache(ttl_s: float, redis_url: str) -> ResultCache | None:
    """The search-result cache: shared through Redis when a URL is given, else in memory;
    None when ``ttl_s`` is 0."""
    if ttl_s <= 0:
        return None
    if redis_url:
        import redis.asyncio  # only with ORCHESTRATOR_REDIS_URL

        return RedisSearchCache(redis.asyncio.Redis.from_url(redis_url), ttl_s)
    return SearchCache(ttl_s=ttl_s)
