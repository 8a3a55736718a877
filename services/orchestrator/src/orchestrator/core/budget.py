"""One deadline per question; every outbound call takes its timeout from what is left."""

from __future__ import annotations

import time
from collections.abc import Callable


class Deadline:
    """A point on the monotonic clock (the one ``asyncio`` uses) by which a question must end."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.at = clock() + seconds

    def remaining(self, reserve: float = 0.0) -> float:
        """Seconds left before the deadline minus ``reserve`` (never negative)."""
        return max(0.0, self.at - reserve - self._clock())

    def timeout(self, cap: float, reserve: float = 0.0) -> float:
        """The timeout for one call: ``cap``, or less when the deadline is nearer."""
        return min(cap, self.remaining(reserve))

    @property
    def expired(self) -> bool:
        """True once no time is left."""
        return self.remaining() <= 0.0
