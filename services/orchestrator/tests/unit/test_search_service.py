"""The search service over in-process backends: failover, rest after 429, merging, the cache,
the rate per backend; and the pure parts: Brave's quota headers, routing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import httpx
import pytest
from orchestrator.adapters.search.brave import parse_quota, parse_results
from orchestrator.adapters.search.cache import SearchCache
from orchestrator.adapters.search.ratelimit import BackendRates, RateLimited
from orchestrator.adapters.search.service import Backend, SearchService
from orchestrator.core.ask.domain import ErrorKind, SearchFailed, SearchHit, SearchResponse
from orchestrator.core.ask.routing import Route, route


@dataclass
class Engine:
    """A backend that answers ``urls`` or fails with ``kind``."""

    urls: list[str] = field(default_factory=list)
    kind: ErrorKind | None = None
    asked: int = 0
    pages: list[tuple[tuple[str, ...], int]] = field(default_factory=list)

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
        self.asked += 1
        self.pages.append((tuple(engines or ()), pageno))
        if self.kind is not None:
            raise SearchFailed(f"failed: {self.kind}", "http://x.test", self.kind)
        return SearchResponse([SearchHit(u, u, "", i + 1) for i, u in enumerate(self.urls)])

    async def ping(self, *, timeout: float) -> bool:
        return self.kind is None


async def test_failover_rests_a_rate_limited_backend() -> None:
    limited, spare = Engine(kind="rate_limited"), Engine(["https://b.test/"])
    service = SearchService([Backend("one", limited), Backend("two", spare)], backoff_s=60)
    first = await service.search("q")
    second = await service.search("q")
    assert (first.backend, second.backend) == ("two", "two")
    assert (limited.asked, spare.asked) == (1, 2)
    assert list(service.status()["resting"]) == ["one"]


async def test_every_backend_failing_names_each() -> None:
    service = SearchService(
        [Backend("one", Engine(kind="unreachable")), Backend("two", Engine(kind="timeout"))]
    )
    with pytest.raises(SearchFailed) as err:
        await service.search("q")
    assert "failed: unreachable" in str(err.value)
    assert "failed: timeout" in str(err.value)


async def test_merge_fuses_lists_and_names_both_backends() -> None:
    a, b = Engine(["https://a.test/", "https://c.test/"]), Engine(["https://c.test/"])
    service = SearchService([Backend("a", a), Backend("b", b)], mode="merge")
    merged = await service.search("q")
    assert merged.backend == "a+b"
    assert [h.url for h in merged.hits] == ["https://c.test/", "https://a.test/"]


async def test_cache_serves_a_repeat_unless_asked_not_to() -> None:
    engine = Engine(["https://a.test/"])
    service = SearchService([Backend("a", engine)], cache=SearchCache(ttl_s=300))
    await service.search("q", time_range="week")
    again = await service.search("q", time_range="week")
    other = await service.search("q", time_range="day")
    fresh = await service.search("q", time_range="week", cache=False)
    assert (again.cached, other.cached, fresh.cached) == (True, False, False)
    assert engine.asked == 3


async def test_engines_and_page_reach_the_backend_and_key_the_cache() -> None:
    engine = Engine(["https://a.test/"])
    service = SearchService([Backend("a", engine)], cache=SearchCache(ttl_s=300))
    await service.search("q")
    second = await service.search("q", pageno=2)
    wiki = await service.search("q", engines=["wikipedia"])
    again = await service.search("q", engines=["wikipedia"])
    assert (second.cached, wiki.cached, again.cached) == (False, False, True)
    assert engine.pages == [((), 1), ((), 2), (("wikipedia",), 1)]


def test_cache_entries_expire() -> None:
    now = [0.0]
    cache = SearchCache(ttl_s=10, clock=lambda: now[0])
    cache.put(("q",), SearchResponse([SearchHit("https://a.test/", "a", "", 1)]))
    assert cache.get(("q",)) is not None
    now[0] = 11
    assert cache.get(("q",)) is None


def test_cache_keeps_the_most_recently_used_within_its_size() -> None:
    cache = SearchCache(ttl_s=10, size=2)
    hit = SearchResponse([SearchHit("https://a.test/", "a", "", 1)])
    cache.put(("a",), hit)
    cache.put(("b",), hit)
    assert cache.get(("a",)) is not None  # a is now the most recent
    cache.put(("c",), hit)
    assert cache.get(("b",)) is None
    assert cache.get(("a",)) is not None
    assert cache.get(("c",)) is not None
    cache.put(("empty",), SearchResponse([]))  # nothing worth keeping, nothing evicted
    assert cache.get(("empty",)) is None
    assert cache.get(("a",)) is not None


async def test_rate_limit_waits_or_refuses_within_the_time_given() -> None:
    rates = BackendRates({"brave": "1/second"})
    await rates.acquire("brave", within=5)
    with pytest.raises(RateLimited):
        await rates.acquire("brave", within=0.01)
    await asyncio.wait_for(rates.acquire("brave", within=5), 5)  # admitted once the window moves
    await rates.acquire("searxng", within=0)  # no rate configured: never waits


def test_brave_quota_headers_and_results() -> None:
    headers = httpx.Headers(
        {
            "X-RateLimit-Limit": "1, 2000",
            "X-RateLimit-Remaining": "0, 1234",
            "X-RateLimit-Reset": "1, 86400",
        }
    )
    quota = parse_quota(headers)
    assert quota is not None
    assert quota.as_dict()["monthly_remaining"] == 1234
    assert parse_quota(httpx.Headers({"X-RateLimit-Limit": "x"})) is None
    data = {"web": {"results": [{"url": "https://a.test/", "title": "<strong>A</strong>",
                                 "description": "d", "page_age": "2026-01-02T00:00:00"},
                                {"url": "ftp://nope"}, "junk"]}}  # fmt: skip
    (hit,) = parse_results(data)
    assert (hit.title, hit.published, hit.engines) == ("A", "2026-01-02T00:00:00", ("brave",))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the latest news about the election?", Route("news", "week")),
        ("python asyncio TaskGroup exception handling", Route("it", None)),
        ("peer-reviewed study on protein folding", Route("science", None)),
        ("what happened in the markets today", Route("news", "day")),
        ("best laptops of 2026", Route(None, "year")),
        ("what causes tides", Route(None, None)),
    ],
)
def test_routing_picks_category_and_time_range(question: str, expected: Route) -> None:
    assert route(question, today=date(2026, 11, 24)) == expected
