"""The web search wiring: the backends a settings change rebuilds, over the parts it keeps.

A settings change (``PATCH /v1/settings``) builds a new ``SearchService`` while questions
started before it still search through the old one. So the service owns nothing that must be
closed: the result cache, the rate windows and the in-flight bound — the only holders of Redis
connections — are built once per process (their settings cannot change at run time) and shared
by every service built since; the runtime closes them when the app stops. A leaked Redis client
per change, or a cache closed under a running question, cannot happen.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from orchestrator.adapters.search.brave import BraveClient
from orchestrator.adapters.search.cache import ResultCache, search_cache
from orchestrator.adapters.search.ratelimit import BackendRates
from orchestrator.adapters.search.searxng import SearxngClient
from orchestrator.adapters.search.service import Backend, SearchService
from orchestrator.config import Settings

#: A readiness probe: True when the dependency answers within ``timeout`` seconds.
Probe = Callable[[float], Awaitable[bool]]


@dataclass(frozen=True)
class SearchShared:
    """What every search service of the process shares: cache, rates, in-flight bound."""

    cache: ResultCache | None
    rates: BackendRates
    limit: asyncio.Semaphore

    @classmethod
    def open(cls, settings: Settings) -> SearchShared:
        """In memory, or shared through Redis by every replica (ORCHESTRATOR_REDIS_URL); no
        connection is made before the first search."""
        rates = {"searxng": settings.search_rate_limit, "brave": settings.brave_rate_limit}
        return cls(
            search_cache(settings.search_cache_s, settings.redis_url),
            BackendRates(rates, redis_url=settings.redis_url),
            asyncio.Semaphore(settings.searxng_max_inflight),
        )

    async def aclose(self) -> None:
        """Close the cache's and the rates' connections (once, when the app stops)."""
        close = getattr(self.cache, "aclose", None)
        if close is not None:
            await close()
        await self.rates.aclose()


def search_service(
    settings: Settings, http: httpx.AsyncClient, shared: SearchShared
) -> SearchService:
    """The configured web search backends behind one service (failover or merge)."""
    backends: list[Backend] = []
    for name in settings.backend_names():
        if name == "brave":
            brave = BraveClient(
                settings.brave_api_key.get_secret_value(),
                http,
                base_url=settings.brave_url,
                timeout=settings.searxng_timeout_s,
            )
            backends.append(Backend("brave", brave))
            continue
        urls = settings.searxng_urls() or [""]  # "": searches fail saying SEARXNG_URL is unset
        for url in urls:
            client = SearxngClient(
                url,
                http,
                settings.searxng_timeout_s,
                retry_backoff_s=settings.searxng_retry_backoff_s,
                retries=settings.searxng_retries,
            )
            label = "searxng" if len(urls) == 1 else f"searxng@{urlsplit(url).netloc}"
            backends.append(Backend(label, client))
    return SearchService(
        backends,
        mode=settings.search_mode,
        cache=shared.cache,
        rates=shared.rates,
        limit=shared.limit,
        backoff_s=settings.searxng_backoff_s,
        rate_wait_s=settings.searxng_timeout_s,
    )


def search_probes(service: SearchService) -> dict[str, Probe]:
    """/readyz probes: "searxng" (any instance answers) and "brave" (a key is set)."""

    async def any_up(kind: str, timeout: float) -> bool:
        mine = [b for b in service.backends if b.name.split("@", 1)[0] == kind]
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(b.client.ping(timeout=timeout)) for b in mine]
        return any(t.result() for t in tasks)

    kinds = dict.fromkeys(b.name.split("@", 1)[0] for b in service.backends)
    return {k: functools.partial(any_up, k) for k in kinds}
