"""Limits and caches shared through a real redis-server (started by the test): two replicas'
rate limiters count one budget per client, two replicas' search caches share entries (by the
normalised query, with the TTL set in Redis), and a Redis that is away is a cache miss."""

from __future__ import annotations

import pytest
from orchestrator.adapters.search.cache import RedisSearchCache, normalised
from orchestrator.adapters.search.ratelimit import BackendRates
from orchestrator.adapters.search.ratelimit import RateLimited as SearchRateLimited
from orchestrator.api.shared.ratelimit import RateLimited, RateLimiter
from orchestrator.config import Settings
from orchestrator.core.ask.domain import SearchHit, SearchResponse
from orchestrator.wiring.runtime import production_runtime
from redis.asyncio import Redis as Client

from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
from tests.conftest import free_port
from tests.datastores import Redis


async def test_two_replicas_count_one_budget_per_client(redis: Redis) -> None:
    settings = Settings(redis_url=redis.url, rate_questions="3/minute")
    a, b = RateLimiter(settings, tokens=True), RateLimiter(settings, tokens=True)
    try:
        await a.check("tok:ann", "questions")
        await b.check("tok:ann", "questions")
        await a.check("tok:ann", "questions")
        with pytest.raises(RateLimited) as refused:
            await b.check("tok:ann", "questions")
        assert (refused.value.retry_after_s or 0) >= 1
        await b.check("tok:bob", "questions")  # another client has its own budget
    finally:
        await a.aclose()
        await b.aclose()


async def test_two_replicas_share_search_results_by_normalised_query(redis: Redis) -> None:
    response = SearchResponse(
        [SearchHit("https://a.example/", "A", "snip", 1, engines=("ddg", "brave"))],
        unresponsive_reasons=[("qwant", "timeout")],
        backend="searxng",
        quota={"left": 5},
    )
    a = RedisSearchCache(Client.from_url(redis.url), ttl_s=300)
    b = RedisSearchCache(Client.from_url(redis.url), ttl_s=300)
    try:
        assert await b.lookup(("What is  Quarry", "", "", "", "searxng")) is None
        await a.store(("What is  Quarry", "", "", "", "searxng"), response)
        got = await b.lookup(("what is quarry", "", "", "", "searxng"))
        assert got is not None
        assert got.cached
        assert got.hits == response.hits
        assert got.unresponsive_reasons == response.unresponsive_reasons
        assert (got.backend, got.quota) == ("searxng", {"left": 5})
        # Other options are another entry; the TTL is Redis's own.
        assert await b.lookup(("what is quarry", "", "", "day", "searxng")) is None
        direct = Client.from_url(redis.url)
        ttl = await direct.pttl(normalised(("what is quarry", "", "", "", "searxng")))
        await direct.aclose()
        assert 0 < ttl <= 300_000
        await a.store(("empty",), SearchResponse([]))  # nothing worth keeping
        assert await b.lookup(("empty",)) is None
    finally:
        await a.aclose()
        await b.aclose()


async def test_a_redis_that_is_away_is_a_miss_not_a_failure() -> None:
    gone = RedisSearchCache(Client.from_url(f"redis://127.0.0.1:{free_port()}"), 60)
    await gone.store(("q",), SearchResponse([SearchHit("https://a.example/", "A", "", 1)]))
    assert await gone.lookup(("q",)) is None
    await gone.aclose()


async def test_a_search_backends_rate_holds_across_replicas(redis: Redis) -> None:
    a = BackendRates({"brave": "2/minute"}, redis_url=redis.url)
    b = BackendRates({"brave": "2/minute"}, redis_url=redis.url)
    try:
        await a.acquire("brave", within=0)
        await b.acquire("brave", within=0)
        with pytest.raises(SearchRateLimited):
            await a.acquire("brave", within=0)
    finally:
        await a.aclose()
        await b.aclose()


async def test_settings_changes_open_no_more_redis_connections(redis: Redis) -> None:
    # PATCH /v1/settings builds a new search service per change (wiring/runtime.py rewire);
    # each used to open its own Redis clients (cache and rates) and never close them. Now the
    # services share one cache and one rate store, closed once when the app stops.
    watcher = Client.from_url(redis.url)
    try:
        before = len(await watcher.client_list())
        async with FakeSearxng() as searx:
            settings = Settings(redis_url=redis.url, searxng_url=searx.url, search_cache_s=60)
            async with production_runtime(settings) as runtime:
                assert runtime.search is not None
                await runtime.search.search("first")
                after_one = len(await watcher.client_list())
                assert after_one > before  # the cache and the rates did connect
                for n in range(5):
                    changed = settings.model_copy(update={"search_mode": "merge"})
                    runtime = runtime.rewire(changed) if runtime.rewire else runtime
                    assert runtime.search is not None
                    await runtime.search.search(f"question {n}")
                assert len(await watcher.client_list()) == after_one
            assert len(await watcher.client_list()) == before  # closed with the app
    finally:
        await watcher.aclose()
