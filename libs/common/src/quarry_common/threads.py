"""CPU-bound work off the event loop, a bounded number of threads at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_thread(slots: asyncio.Semaphore, fn: Callable[[], T]) -> T:
    """Run ``fn`` in a worker thread once ``slots`` admits it; the slot is held until it ends."""
    async with slots:
        work = asyncio.ensure_future(asyncio.to_thread(fn))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            # A thread cannot be interrupted: keep its slot until it ends, so cancelled
            # calls (deadline passed, client gone) never stack up more CPU work.
            await asyncio.wait([work])
            raise
