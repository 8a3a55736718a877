"""Wait for an LLM server that is still loading its model (`make run`'s embedded model).

A question that arrives while the model loads should wait for it (bounded), not fail with
``llm_unavailable``. Once the server has answered, it is taken as ready for the life of the
process: probing it again per question would queue behind running generations (the embedded
server serialises requests), and a server that goes away later fails the call that needs it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

# How often a waiting question asks again, and how long one probe may take.
POLL_S = 1.0
PROBE_S = 2.0


class ReadyGate:
    """Remembers whether the LLM server has answered; lets questions wait until it does."""

    def __init__(self, probe: Callable[[float], Awaitable[bool]], poll_s: float = POLL_S) -> None:
        self._probe = probe
        self._poll_s = poll_s
        self.ready = False

    async def check(self) -> bool:
        """Probe once (unless already ready); True when the server answers."""
        if self.ready:
            return True
        try:
            async with asyncio.timeout(PROBE_S):
                self.ready = await self._probe(PROBE_S)
        except TimeoutError:
            return False
        except Exception:  # a failing probe means "not ready yet", never a failed question
            logger.debug("LLM readiness probe failed", exc_info=True)
            return False
        return self.ready

    async def wait(self, limit_s: float) -> bool:
        """Probe every ``poll_s`` until the server answers or ``limit_s`` passes."""
        loop = asyncio.get_running_loop()
        end = loop.time() + limit_s
        while not await self.check():
            left = end - loop.time()
            if left <= 0:
                return False
            await asyncio.sleep(min(self._poll_s, left))
        return True
