"""PostgreSQL LISTEN/NOTIFY as wake-ups: one listening connection per process, any number of
waiters keyed by (channel, run id).

A notification carries no data, only "look again": the waiter re-reads the database
(``events_after``, the run's row), which is the only source of truth. So a lost notification
(the connection dropped and came back) costs at most one wait's timeout, never an event: every
reconnect wakes every waiter, and every wait has a timeout (the stream's heartbeat).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from psycopg import AsyncConnection

logger = logging.getLogger(__name__)

Key = tuple[str, str]
RECONNECT_S = 1.0


class Notifier:
    """Wakes waiters on ``NOTIFY channel, 'run id'``; start with :meth:`start`."""

    def __init__(self, url: str, channels: tuple[str, ...]) -> None:
        self._url = url
        self._channels = channels
        self._events: dict[Key, asyncio.Event] = {}
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    async def start(self) -> None:
        """Listen in the background (reconnecting as needed); returns once listening."""
        self._task = asyncio.create_task(self._listen(), name="pg-notify")
        async with asyncio.timeout(30):
            await self.connected.wait()

    async def aclose(self) -> None:
        """Stop listening."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def token(self, channel: str, key: str) -> asyncio.Event:
        """Take before reading the database; ``wait`` then returns at once if a notification
        came in between."""
        return self._events.setdefault((channel, key), asyncio.Event())

    async def wait(self, channel: str, key: str, token: asyncio.Event, timeout: float) -> bool:
        """Wait for a notification about ``key``; False after ``timeout`` without one."""
        try:
            async with asyncio.timeout(timeout):
                await token.wait()
        except TimeoutError:
            return False
        return True

    def _wake(self, channel: str, key: str) -> None:
        # Popped, so the next token() is a fresh event (and a finished run's key goes away).
        event = self._events.pop((channel, key), None)
        if event is not None:
            event.set()

    def _wake_all(self) -> None:
        events, self._events = self._events, {}
        for event in events.values():
            event.set()

    async def _listen(self) -> None:
        while True:
            try:
                conn: AsyncConnection[Any] = await AsyncConnection.connect(
                    self._url, autocommit=True
                )
                async with conn:
                    for channel in self._channels:
                        await conn.execute(f'LISTEN "{channel}"')
                    self.connected.set()
                    self._wake_all()  # anything sent while we were away: look again
                    async for note in conn.notifies():
                        self._wake(note.channel, note.payload)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - any failure: reconnect (waiters re-read the DB)
                logger.warning("listening for database notifications failed; reconnecting")
            self.connected.clear()
            self._wake_all()
            await asyncio.sleep(RECONNECT_S)
