"""A process-wide request rate per search backend, with the ``limits`` library.

``limits`` (moving window, in-memory storage) is the library branch `sec` uses for the API's
own rate limits; a search waits for the window to admit it rather than failing, but never
past the time its caller has.

With ``ORCHESTRATOR_REDIS_URL`` the windows live in Redis, so the rate holds across every
replica (one ``hit`` per search: atomic in Redis, exact however many replicas search).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

# Granularity of the wait for a full window to admit a search.
_MIN_WAIT_S = 0.05


class RateLimited(Exception):
    """The backend's rate would not admit a search within the caller's time."""


class BackendRates:
    """One moving-window limit per backend name, e.g. ``{"brave": "1/second"}``."""

    def __init__(self, rates: dict[str, str], redis_url: str = "") -> None:
        self._pool: Any = None
        storage: Storage
        if redis_url:
            import redis.asyncio  # only with ORCHESTRATOR_REDIS_URL

            self._pool = redis.asyncio.ConnectionPool.from_url(redis_url)
            storage = RedisStorage(
                "async+" + redis_url,
                implementation="redispy",
                key_prefix="quarry-search-rate",
                connection_pool=self._pool,
            )
        else:
            storage = MemoryStorage()
        self._storage = storage
        self._limiter = MovingWindowRateLimiter(self._storage)
        self._items: dict[str, RateLimitItem] = {k: parse(v) for k, v in rates.items() if v}

    async def acquire(self, backend: str, *, within: float) -> None:
        """Wait until ``backend``'s window admits one more search.

        Raises:
            RateLimited: it would not within ``within`` seconds.
        """
        item = self._items.get(backend) or self._items.get(backend.split("@", 1)[0])
        if item is None:
            return
        end = time.monotonic() + within
        while not await self._limiter.hit(item, backend):
            stats = await self._limiter.get_window_stats(item, backend)
            wait = max(_MIN_WAIT_S, stats.reset_time - time.time())
            if time.monotonic() + wait > end:
                raise RateLimited(
                    f"The search rate limit for {backend} ({item}) admits no more searches now."
                )
            await asyncio.sleep(wait)

    async def aclose(self) -> None:
        """Close the Redis connections (nothing to do in memory)."""
        if self._pool is not None:
            await self._pool.disconnect()
