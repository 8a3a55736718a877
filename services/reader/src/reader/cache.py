"""An in-process LRU of recent successful reads, with a time to live."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from reader.model import ReadResult


class ReadCache:
    """Maps a normalised URL to its last OK result for ``ttl_s`` seconds, at most ``size``."""

    def __init__(
        self, *, size: int, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._size = size
        self._ttl_s = ttl_s
        self._clock = clock
        self._items: OrderedDict[str, tuple[float, int, ReadResult]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str, max_bytes: int) -> ReadResult | None:
        """The cached result for ``key``, unless expired or cut at a smaller byte cap."""
        item = self._items.get(key)
        if item is None:
            return None
        stored_at, cap, result = item
        if self._clock() - stored_at > self._ttl_s:
            del self._items[key]
            return None
        if result.truncated and cap < max_bytes:
            return None  # a bigger cap would read more of the page
        self._items.move_to_end(key)
        return result

    def put(self, key: str, max_bytes: int, result: ReadResult) -> None:
        """Remember ``result`` (read under ``max_bytes``), evicting the least recent."""
        self._items[key] = (self._clock(), max_bytes, result)
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
