"""The recent-reads cache: LRU order, TTL and byte-cap awareness."""

from __future__ import annotations

from reader.cache import ReadCache
from reader.model import ReadResult, Status


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _ok(url: str, truncated: bool = False) -> ReadResult:
    return ReadResult(Status.OK, url, truncated=truncated)


def test_hit_then_expiry() -> None:
    clock = Clock()
    cache = ReadCache(size=4, ttl_s=600, clock=clock)
    cache.put("http://a/", 100, _ok("http://a/"))
    clock.now = 599
    assert cache.get("http://a/", 100) == _ok("http://a/")
    clock.now = 601
    assert cache.get("http://a/", 100) is None
    assert len(cache) == 0


def test_least_recently_used_is_evicted() -> None:
    cache = ReadCache(size=2, ttl_s=600, clock=Clock())
    cache.put("a", 1, _ok("a"))
    cache.put("b", 1, _ok("b"))
    assert cache.get("a", 1) is not None  # a is now the most recent
    cache.put("c", 1, _ok("c"))
    assert cache.get("b", 1) is None
    assert cache.get("a", 1) is not None
    assert cache.get("c", 1) is not None


def test_truncated_result_is_not_served_for_a_bigger_cap() -> None:
    cache = ReadCache(size=2, ttl_s=600, clock=Clock())
    cache.put("a", 1000, _ok("a", truncated=True))
    assert cache.get("a", 1000) is not None
    assert cache.get("a", 500) is not None
    assert cache.get("a", 2000) is None
