"""One search service over several backends: failover or merging, a cache, rates, back-off.

The agent loop sees one ``Searcher``. Behind it, each backend (a SearXNG instance, the Brave
Search API) is tried in the configured order (``failover``: the first that answers wins) or all
at once (``merge``: their lists fused by reciprocal rank fusion). A backend that answers 429 is
skipped for a while (its Retry-After, else ``backoff_s``) and the next one is asked.

The service owns no connection: the cache and rates it is given outlive it (a settings change
builds a new service over the same ones; wiring/search.py), and their owner closes them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from orchestrator.adapters.search.cache import ResultCache
from orchestrator.adapters.search.ratelimit import BackendRates, RateLimited
from orchestrator.core.ask.domain import SearchFailed, SearchResponse
from orchestrator.core.ask.fusion import rrf

logger = logging.getLogger(__name__)

Mode = Literal["failover", "merge"]


@dataclass(frozen=True)
class Args:
    """One search as every backend is asked it."""

    query: str
    categories: str | None = None
    language: str | None = None
    time_range: str | None = None
    engines: tuple[str, ...] = ()
    pageno: int = 1


class SearchClient(Protocol):
    """One backend adapter (SearxngClient, BraveClient)."""

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        engines: Sequence[str] | None = None,
        pageno: int = 1,
    ) -> SearchResponse:
        """One page of results."""
        ...

    async def ping(self, *, timeout: float) -> bool:
        """True when the backend answers."""
        ...


@dataclass
class Backend:
    """A named adapter and when it may be asked again after a 429."""

    name: str
    client: SearchClient
    resting_until: float = 0.0


class SearchService:
    """The configured backends as one ``Searcher``."""

    def __init__(
        self,
        backends: Sequence[Backend],
        *,
        mode: Mode = "failover",
        cache: ResultCache | None = None,
        rates: BackendRates | None = None,
        limit: asyncio.Semaphore | None = None,
        backoff_s: float = 30.0,
        rate_wait_s: float = 5.0,
    ) -> None:
        self.backends = list(backends)
        self._mode = mode
        self._cache = cache
        self._rates = rates
        self._limit = limit or asyncio.Semaphore(64)
        self._backoff_s = backoff_s
        self._rate_wait_s = rate_wait_s

    @property
    def names(self) -> list[str]:
        """Backend names in the configured order."""
        return [b.name for b in self.backends]

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        engines: Sequence[str] | None = None,
        pageno: int = 1,
        cache: bool = True,
    ) -> SearchResponse:
        """Results for ``query`` from the backends (or the cache, unless ``cache`` is False):
        ``pageno`` is the page (1-based), ``engines`` the SearXNG engines to ask.

        Raises:
            SearchFailed: every backend failed; the message names each and what to do.
        """
        if not self.backends:
            raise SearchFailed(
                "No search backend is configured: set SEARXNG_URL (or BRAVE_API_KEY with "
                "ORCHESTRATOR_SEARCH_BACKENDS=brave).",
                "",
                "config",
            )
        args = Args(query, categories, language, time_range, tuple(engines or ()), pageno)
        key = (
            query,
            categories or "",
            language or "",
            time_range or "",
            ",".join(args.engines),
            str(pageno),
            *self.names,
        )
        if cache and self._cache is not None and (hit := await self._cache.lookup(key)) is not None:
            return hit
        if self._mode == "merge":
            response = await self._merge(args)
        else:
            response = await self._failover(args)
        if self._cache is not None:
            await self._cache.store(key, response)
        return response

    async def _failover(self, args: Args) -> SearchResponse:
        errors: list[SearchFailed] = []
        awake = [b for b in self.backends if b.resting_until <= time.monotonic()]
        # All resting: asking the one that wakes first beats answering nothing at all.
        for backend in awake or sorted(self.backends, key=lambda b: b.resting_until)[:1]:
            try:
                return await self._ask(backend, args)
            except SearchFailed as err:
                errors.append(err)
        raise _combined(errors)

    async def _merge(self, args: Args) -> SearchResponse:
        awake = [b for b in self.backends if b.resting_until <= time.monotonic()] or self.backends
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(self._try(b, args)) for b in awake]
        outcomes = [t.result() for t in tasks]
        answers = [o for o in outcomes if isinstance(o, SearchResponse)]
        if not answers:
            raise _combined([o for o in outcomes if isinstance(o, SearchFailed)])
        hits = rrf([a.hits for a in answers]) if len(answers) > 1 else answers[0].hits
        return SearchResponse(
            hits=hits,
            unresponsive_engines=sorted({e for a in answers for e in a.unresponsive_engines}),
            unresponsive_reasons=[r for a in answers for r in a.unresponsive_reasons],
            suggestions=[s for a in answers for s in a.suggestions],
            backend="+".join(a.backend for a in answers),
            quota={k: v for a in answers for k, v in a.quota.items()},
        )

    async def _try(self, backend: Backend, args: Args) -> SearchResponse | SearchFailed:
        try:
            return await self._ask(backend, args)
        except SearchFailed as err:
            return err

    async def _ask(self, backend: Backend, args: Args) -> SearchResponse:
        async with self._limit:
            try:
                if self._rates is not None:
                    await self._rates.acquire(backend.name, within=self._rate_wait_s)
                response = await backend.client.search(
                    args.query,
                    categories=args.categories,
                    language=args.language,
                    time_range=args.time_range,
                    engines=args.engines or None,
                    pageno=args.pageno,
                )
            except RateLimited as err:
                raise SearchFailed(str(err), backend.name, "rate_limited") from None
            except SearchFailed as err:
                if err.kind == "rate_limited":
                    rest = err.retry_after_s or self._backoff_s
                    backend.resting_until = time.monotonic() + min(rest, 86400.0)
                    logger.warning(
                        "search backend rate-limited; resting it",
                        extra={"backend": backend.name, "rest_s": rest},
                    )
                raise
        return replace(response, backend=backend.name)

    def status(self) -> dict[str, Any]:
        """For /readyz: the backends in order, which are resting after a 429, and quotas."""
        now = time.monotonic()
        quotas: dict[str, dict[str, int]] = {}
        for b in self.backends:
            quota = getattr(b.client, "quota", None)
            if quota is not None:
                quotas[b.name] = quota.as_dict()
        return {
            "mode": self._mode,
            "backends": self.names,
            "resting": {
                b.name: round(b.resting_until - now, 1)
                for b in self.backends
                if b.resting_until > now
            },
            "quota": quotas,
        }

    async def ping(self, *, timeout: float) -> bool:
        """True when any backend answers."""
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(b.client.ping(timeout=timeout)) for b in self.backends]
        return any(t.result() for t in tasks)


def _combined(errors: list[SearchFailed]) -> SearchFailed:
    if len(errors) == 1:
        return errors[0]
    message = "Every search backend failed: " + " | ".join(str(e) for e in errors)
    return SearchFailed(message, errors[0].url if errors else "", errors[0].kind)
