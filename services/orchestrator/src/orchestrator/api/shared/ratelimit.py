"""Rate limits per client and endpoint family, on the `limits` package's moving windows.

A client is its bearer token (by digest) when tokens are configured, else its address. Each
family has its own limits (``ORCHESTRATOR_RATE_QUESTIONS`` …). Routes call
``await enforce(request, "questions")``: over the limit it raises ``RateLimited`` (429 with
``Retry-After``); near it, it returns a notice the route puts into the run's stream as a
``rate_limit_near`` warning.

``auto`` (the default) picks a profile. Without API tokens the API answers one person: the
server only binds loopback then, unless ORCHESTRATOR_INSECURE_NO_AUTH says something else keeps
strangers out, and all of that person's clients (the web UI, an Open WebUI connection, the CLI,
scripts) share one address and so one budget: ``PERSONAL`` is sized so that they never meet it
in normal use and only a runaway loop does. With tokens the API is shared or exposed: each
token gets ``SHARED``, a budget for one client of one person, tight enough that a leaked token
cannot keep the LLM and the search engines busy for long.

Several replicas (``ORCHESTRATOR_REDIS_URL``): the windows live in Redis (`limits`' own Redis
storage on redis-py), so a client has one budget however its requests are spread. The lock
that keeps test-then-hit atomic is per process; two replicas admitting the same client's
requests in the same millisecond can each pass the test, so a limit may be exceeded by the
number of replicas at most, never more.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import Request
from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from orchestrator.api.shared.security import CLIENT_KEY
from orchestrator.config import Settings
from orchestrator.core.errors import DomainError, ErrorKind

#: Endpoint families: questions = /v1/search (and chat completions), research = deep-research
#: runs, indexing = /v1/corpus/refresh.
Family = Literal["questions", "research", "indexing"]
NEAR_CODE = "rate_limit_near"

logger = logging.getLogger(__name__)


class RateLimited(DomainError):
    """The client used up a limit; ``retry_after_s`` is whole seconds until it frees up."""

    kind = ErrorKind.RATE_LIMITED
    title = "Too many requests"

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail, retry_after_s=retry_after)


@dataclass(frozen=True)
class Notice:
    """A client is near a limit: the warning its run's stream carries."""

    code: str
    message: str


#: ``auto`` without API tokens: one person's clients on one address. A person asks a question
#: every few seconds at most; Open WebUI adds up to three completions per message (title, tags,
#: follow-ups, unless it has a separate task model); a script asking in a loop gets through
#: about one question per LLM round trip, 2-4 at a time (LLM_MAX_INFLIGHT). 120 a minute is
#: above what one machine's LLM answers, so only a client looping on instant failures or
#: small talk reaches it. Research runs are bounded by ORCHESTRATOR_RESEARCH_MAX_INFLIGHT (2);
#: indexing requests queue behind the running refresh (a file watcher may send many).
PERSONAL: dict[Family, str] = {
    "questions": "120/minute",
    "research": "20/minute",
    "indexing": "60/minute",
}
#: ``auto`` with API tokens: per token, i.e. per client when each client has its own token
#: (ORCHESTRATOR_API_TOKENS takes several). Also docs/limits.md's recommended values.
SHARED: dict[Family, str] = {
    "questions": "30/minute;500/day",
    "research": "3/minute;30/day",
    "indexing": "6/minute;100/day",
}


def resolve(settings: Settings, *, tokens: bool) -> dict[Family, str]:
    """The limits each family gets: the settings, with ``auto`` replaced by its profile."""
    profile = SHARED if tokens else PERSONAL
    given: dict[Family, str] = {
        "questions": settings.rate_questions,
        "research": settings.rate_research,
        "indexing": settings.rate_indexing,
    }
    return {f: profile[f] if v.lower() == "auto" else v for f, v in given.items()}


def _limits(value: str) -> tuple[RateLimitItem, ...]:
    return () if value.lower() == "off" else tuple(parse_many(value))


class RateLimiter:
    """Moving-window limits in memory, or in Redis shared by every replica."""

    def __init__(self, settings: Settings, *, tokens: bool) -> None:
        """Limits from ``settings``; ``tokens``: the API has bearer tokens (see ``auto``)."""
        self.limits = resolve(settings, tokens=tokens)
        self._families: dict[str, tuple[RateLimitItem, ...]] = {
            family: _limits(value) for family, value in self.limits.items()
        }
        logger.info(
            "rate limits per client", extra={f"rate_{f}": v for f, v in self.limits.items()}
        )
        self._warn_at = settings.rate_warn_at
        self._memory: MemoryStorage | None = None
        self._redis: Any = None
        storage: Storage
        if settings.redis_url:
            import redis.asyncio  # only with ORCHESTRATOR_REDIS_URL

            # Our own pool (no connection is made before the first request), closed in aclose.
            self._redis = redis.asyncio.ConnectionPool.from_url(settings.redis_url)
            storage = RedisStorage(
                "async+" + settings.redis_url,
                implementation="redispy",
                key_prefix="quarry-rate",
                connection_pool=self._redis,
            )
        else:
            storage = self._memory = MemoryStorage()
        self._storage = storage
        self._limiter = MovingWindowRateLimiter(self._storage)
        # test-then-hit over several limits must not interleave with another request's.
        self._lock = asyncio.Lock()

    async def aclose(self) -> None:
        """Stop the memory storage's expiry task (it would outlive the loop otherwise), or close
        the Redis connections."""
        if self._redis is not None:
            await self._redis.disconnect()
        timer = self._memory.timer if self._memory is not None else None
        if timer is not None and not timer.done():
            timer.cancel()
            await asyncio.wait([timer])

    async def check(self, client: str, family: Family) -> Notice | None:
        """Count one request of ``client`` in ``family``.

        Raises:
            RateLimited: a limit of the family is used up (nothing is counted then).
        """
        items = self._families[family]
        if not items:
            return None
        async with self._lock:
            for item in items:
                if not await self._limiter.test(item, family, client):
                    stats = await self._limiter.get_window_stats(item, family, client)
                    wait = max(1, math.ceil(stats.reset_time - time.time()))
                    raise RateLimited(
                        f"Too many {family} requests: the limit is {item}. Try again in {wait} s.",
                        wait,
                    )
            for item in items:
                await self._limiter.hit(item, family, client)
            return await self._near(client, family, items)

    async def _near(
        self, client: str, family: Family, items: tuple[RateLimitItem, ...]
    ) -> Notice | None:
        for item in items:
            stats = await self._limiter.get_window_stats(item, family, client)
            used = item.amount - stats.remaining
            if used >= self._warn_at * item.amount:
                return Notice(
                    NEAR_CODE,
                    f"{used} of {item.amount} {family} requests used (limit {item}); "
                    f"{stats.remaining} left in this window.",
                )
        return None


def client_of(request: Request) -> str:
    """The identity limits count by: the token's digest prefix, else the peer address."""
    known = getattr(request.state, CLIENT_KEY, None)
    if isinstance(known, str):
        return known
    return "addr:" + (request.client.host if request.client else "unknown")


async def enforce(request: Request, family: Family) -> Notice | None:
    """Count this request against ``family``'s limits (for routes; see the module docstring).

    Raises:
        RateLimited: over the limit (the problem handler answers 429 with Retry-After).
    """
    limiter: RateLimiter = request.app.state.rate_limiter
    return await limiter.check(client_of(request), family)
