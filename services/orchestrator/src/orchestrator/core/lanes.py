"""LLM lanes: interactive calls first, deep research capped below the total.

One FIFO semaphore let a research run (several dimensions, each judging and compressing) take
every LLM slot, so a quick question asked meanwhile waited behind the whole queue. Research now
holds at most ``research`` of the ``total`` slots; the rest are always free for interactive
calls. With a single-slot server (the embedded llama.cpp) the queue moves to the server, so
``make run`` sets the research lane to 1: a question then waits for at most one research call.
A research lane as wide as the total means no cap: one FIFO queue for every call, the old
behaviour (the lanes benchmark's baseline).
Pure asyncio, no I/O.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

Lane = Literal["interactive", "research"]


class LlmLanes:
    """``total`` LLM calls in flight; research calls at most ``research`` of them."""

    def __init__(self, total: int, research: int = 0) -> None:
        """``research`` 0: one fewer than ``total`` (at least 1); ``total`` or more: uncapped."""
        self.total = total
        self.research = min(total, research) if research > 0 else max(1, total - 1)
        self._all = asyncio.Semaphore(total)
        self._research = asyncio.Semaphore(self.research)

    @asynccontextmanager
    async def slot(self, lane: Lane) -> AsyncIterator[None]:
        """Hold one LLM slot of ``lane`` for the block."""
        if lane == "interactive" or self.research >= self.total:
            # research uncapped (research == total): one FIFO queue for every call, as before
            async with self._all:
                yield
            return
        # The research cap first: a research call never queues on the shared slots ahead of
        # more than ``research - 1`` other research calls.
        async with self._research, self._all:
            yield
