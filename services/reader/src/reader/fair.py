"""Fair sharing of the extraction workers between questions (pure bookkeeping, no I/O).

Waiting jobs are grouped by key (one question). A free worker goes to the key with the fewest
jobs running, ties to the key whose oldest waiting job came first; within a key, jobs run in
arrival order. Heavy jobs (PDFs) are capped: beyond ``heavy_cap`` running, they wait and light
jobs behind them go first.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Waiter:
    """One job waiting for a worker; ``future`` gets the worker."""

    key: str
    heavy: bool
    future: asyncio.Future[Any]
    seq: int = field(default=0)


class FairQueue:
    """Per-key queues of waiting jobs and per-key counts of running ones."""

    def __init__(self, *, heavy_cap: int) -> None:
        self._heavy_cap = max(1, heavy_cap)
        self._waiting: dict[str, deque[Waiter]] = {}
        self._running: Counter[str] = Counter()
        self._heavy_running = 0
        self._seq = itertools.count()

    @property
    def waiting(self) -> int:
        """Jobs waiting for a worker."""
        return sum(len(q) for q in self._waiting.values())

    def running(self, key: str) -> int:
        """Jobs of ``key`` running now."""
        return self._running[key]

    def push(self, key: str, heavy: bool, future: asyncio.Future[Any]) -> Waiter:
        """Queue a job of ``key``."""
        waiter = Waiter(key, heavy, future, next(self._seq))
        self._waiting.setdefault(key, deque()).append(waiter)
        return waiter

    def discard(self, waiter: Waiter) -> None:
        """Forget a waiting job (its caller gave up)."""
        queue = self._waiting.get(waiter.key)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            if not queue:
                del self._waiting[waiter.key]

    def pop(self) -> Waiter | None:
        """The job that gets the next free worker, or None when none may run now."""
        best: tuple[int, int, str, Waiter] | None = None
        for key, queue in self._waiting.items():
            waiter = self._first_eligible(queue)
            if waiter is None:
                continue
            rank = (self._running[key], waiter.seq, key, waiter)
            if best is None or rank[:2] < best[:2]:
                best = rank
        if best is None:
            return None
        waiter = best[3]
        self.discard(waiter)
        return waiter

    def _first_eligible(self, queue: deque[Waiter]) -> Waiter | None:
        for waiter in queue:
            if waiter.future.done():  # cancelled while waiting; removed by its caller soon
                continue
            if waiter.heavy and self._heavy_running >= self._heavy_cap:
                continue
            return waiter
        return None

    def started(self, key: str, *, heavy: bool) -> None:
        """A job of ``key`` got a worker."""
        self._running[key] += 1
        self._heavy_running += heavy

    def finished(self, key: str, *, heavy: bool) -> None:
        """A job of ``key`` gave its worker back."""
        if self._running[key] > 0:
            self._running[key] -= 1
            if not self._running[key]:
                del self._running[key]
            self._heavy_running = max(0, self._heavy_running - heavy)

    def fail_all(self, error: BaseException) -> None:
        """Wake every waiting job with ``error`` (the pool is closing)."""
        for queue in self._waiting.values():
            for waiter in queue:
                if not waiter.future.done():
                    waiter.future.set_exception(error)
        self._waiting.clear()
