"""A research run's event log: numbered, persisted in batches, followed by any number of readers.

Readers only ever see events that are already in the database, so a client can never have seen
an event that a crash then loses (and that a resumed run would number again).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from orchestrator.core.events import EventSink, EventType
from orchestrator.core.store import StoredEvent

logger = logging.getLogger(__name__)

Flush = Callable[[Sequence[StoredEvent]], Awaitable[None]]


class EventLog:
    """The events one process emits for a run, from ``base_seq`` on."""

    def __init__(self, base_seq: int, flush: Flush) -> None:
        self.base_seq = base_seq
        self.events: list[StoredEvent] = []
        self.persisted = base_seq - 1
        self.finished = False
        self._flush = flush
        self._pending: list[StoredEvent] = []
        self._dirty = asyncio.Event()
        self._changed = asyncio.Event()

    @property
    def next_seq(self) -> int:
        """The number the next event gets."""
        return self.base_seq + len(self.events)

    def emit(self, type_: str, data: dict[str, Any]) -> StoredEvent:
        """Number an event and queue it for the database."""
        event = StoredEvent(self.next_seq, type_, data)
        self.events.append(event)
        self._pending.append(event)
        self._dirty.set()
        return event

    async def flush(self) -> None:
        """Write the queued events (with the run's state) now; wake the readers."""
        batch, self._pending = self._pending, []
        try:
            await self._flush(batch)
        except BaseException:
            self._pending[:0] = batch  # written again next time (re-saved events are ignored)
            raise
        if batch:
            self.persisted = batch[-1].seq
        self._wake()

    async def flush_loop(self) -> None:
        """Flush whenever events are queued (batched: events emitted meanwhile go together)."""
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self.flush()
            except Exception:  # a full disk must not kill the run; the next flush retries
                logger.exception("saving research events failed")
                await asyncio.sleep(1.0)
                self._dirty.set()

    def finish(self) -> None:
        """No more events will come (after the final flush)."""
        self.finished = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def readable_after(self, after: int) -> list[StoredEvent]:
        """Persisted events with ``seq > after`` held in memory."""
        start = max(after + 1 - self.base_seq, 0)
        stop = self.persisted + 1 - self.base_seq
        return self.events[start:stop] if stop > start else []

    def done_after(self, after: int) -> bool:
        """True when a reader that saw ``after`` has seen everything there will be."""
        return self.finished and after >= self.persisted

    def token(self) -> asyncio.Event:
        """Take before reading: ``wait(token)`` then returns at once if anything came since."""
        return self._changed

    @staticmethod
    async def wait(changed: asyncio.Event, timeout: float) -> bool:
        """Wait for new persisted events (or the end); False after ``timeout`` with nothing."""
        try:
            async with asyncio.timeout(timeout):
                await changed.wait()
        except TimeoutError:
            return False
        return True


# The agent steps' events a research run passes on (tagged with the dimension); the others
# (rank.completed, read.*, chunks.ranked) only move counters.
_FORWARDED = frozenset({"search.started", "search.completed", "judge", "warning", "policy"})
_FIELDS_DROPPED = frozenset({"round", "unresponsive_engines"})


class DimensionSink(EventSink):
    """The sink the agent's steps emit to while researching one dimension."""

    def __init__(
        self, log: EventLog, dimension: str, on_event: Callable[[str, dict[str, Any]], None]
    ) -> None:
        super().__init__()
        self._log = log
        self._dimension = dimension
        self._on_event = on_event
        self.iteration = 0
        self.category = "general"

    def emit(self, type_: EventType, data: dict[str, Any]) -> Any:
        """Tag and forward an agent event (or only count it)."""
        self._on_event(type_, data)
        if type_ not in _FORWARDED:
            return None
        out = {k: v for k, v in data.items() if k not in _FIELDS_DROPPED}
        out = {"dimension": self._dimension, "iteration": self.iteration, **out}
        if type_ == "search.started":
            out["category"] = self.category
        return self._log.emit(type_, out)
