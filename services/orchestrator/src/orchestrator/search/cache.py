"""A small in-memory TTL cache of search responses, keyed by query and options.

Hand-written (as the reader's read cache is) rather than a dependency: an ordered dict with
expiry and an LRU bound is the whole of it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from orchestrator.agent.domain import SearchResponse

Key = tuple[str, ...]


class SearchCache:
    """Responses for ``ttl_s`` seconds, at most ``size`` of them (least recently used go)."""

    def __init__(
        self, *, ttl_s: float, size: int = 512, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl_s
        self._size = size
        self._clock = clock
        self._items: OrderedDict[Key, tuple[float, SearchResponse]] = OrderedDict()

    def get(self, key: Key) -> SearchResponse | None:
        """The cached response (marked ``cached``), or None when absent or expired."""
        entry = self._items.get(key)
        if entry is None:
            return None
        at, response = entry
        if self._clock() - at > self._ttl:
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return replace(response, cached=True)

    def put(self, key: Key, response: SearchResponse) -> None:
        """Keep ``response`` (only responses with results are worth keeping)."""
        if self._ttl <= 0 or not response.hits:
            return
        self._items[key] = (self._clock(), response)
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
