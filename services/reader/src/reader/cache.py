"""An in-process LRU of recent successful reads, with a time to live: cachetools' ``TTLCache``
(the project's one cache library; docs/architecture.md)."""

from __future__ import annotations

import time
from collections.abc import Callable

from cachetools import TTLCache

from reader.model import ReadResult


class ReadCache:
    """Maps a normalised URL to its last OK result for ``ttl_s`` seconds, at most ``size``."""

    def __init__(
        self, *, size: int, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        # Each entry: (the byte cap it was read under, the result).
        self._items: TTLCache[str, tuple[int, ReadResult]] = TTLCache(size, ttl_s, timer=clock)

    def __len__(self) -> int:
        self._items.expire()
        return len(self._items)

    def get(self, key: str, max_bytes: int) -> ReadResult | None:
        """The cached result for ``key``, unless expired or cut at a smaller byte cap."""
        item = self._items.get(key)  # a hit becomes the most recently used
        if item is None:
            return None
        cap, result = item
        if result.truncated and cap < max_bytes:
            return None  # a bigger cap would read more of the page
        return result

    def put(self, key: str, max_bytes: int, result: ReadResult) -> None:
        """Remember ``result`` (read under ``max_bytes``), evicting the least recent."""
        self._items[key] = (max_bytes, result)
