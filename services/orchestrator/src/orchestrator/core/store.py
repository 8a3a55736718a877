"""What the orchestrator needs from a database, as protocols: SQLite (adapters/store/sqlite.py) and
PostgreSQL (adapters/store/pg.py, which also queues runs for research workers; docs/scaling.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from orchestrator.core.principals import LOCAL_ID

# PostgreSQL NOTIFY channels (adapters/store/pg.py sends, adapters/store/notify.py listens): a
# run's events were
# saved (payload: its id); a control request awaits a run's worker (its id); a run was queued.
EVENTS_CHANNEL = "quarry_events"
CONTROL_CHANNEL = "quarry_control"
QUEUE_CHANNEL = "quarry_queue"


@dataclass(frozen=True)
class StoredEvent:
    """One event of a research run: ``seq`` counts from 0 within the run, with no gaps."""

    seq: int
    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class RunRecord:
    """A research run's row: identity, status and its whole state (a JSON object)."""

    id: str
    query: str
    mode: str
    status: str
    phase: str | None
    session_id: str | None
    state: dict[str, Any]
    created_at: float
    updated_at: float
    finished_at: float | None = None
    last_seq: int = -1
    # The principal that started the run (orchestrator/core/principals.py); only it or an admin
    # sees the run. Never changes (a resume by an admin keeps it).
    owner: str = LOCAL_ID
    # The worker holding the run (shared database only; None in the single-process default):
    # a save by anyone else is refused (LeaseLost), so a worker that was presumed dead and
    # comes back cannot overwrite the run another worker took over.
    lease_owner: str | None = None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> RunRecord:
        """A run from a ``research_runs`` row in RUN_COLUMNS order, followed by ``lease_owner``
        where the database keeps one (PostgreSQL); ``state`` is the JSON text."""
        return cls(
            id=row[0],
            query=row[1],
            mode=row[2],
            status=row[3],
            phase=row[4],
            session_id=row[5],
            state=orjson.loads(row[6]),
            created_at=row[7],
            updated_at=row[8],
            finished_at=row[9],
            last_seq=row[10],
            owner=row[11],
            lease_owner=row[12] if len(row) > 12 else None,
        )

    def as_row(self) -> tuple[Any, ...]:
        """The values in RUN_COLUMNS order (``state`` as JSON text): ``from_row``'s inverse."""
        return (
            self.id,
            self.query,
            self.mode,
            self.status,
            self.phase,
            self.session_id,
            orjson.dumps(self.state).decode(),
            self.created_at,
            self.updated_at,
            self.finished_at,
            self.last_seq,
            self.owner,
        )


#: The columns of ``research_runs`` every database keeps, in ``RunRecord.from_row``'s order
#: and ``as_row`` (PostgreSQL adds ``lease_owner`` after them).
RUN_COLUMNS = (
    "id, query, mode, status, phase, session_id, state, created_at, updated_at, finished_at, "
    "last_seq, owner"
)


class LeaseLost(Exception):
    """The run is held by another worker now (this one's lease expired)."""


class ResearchStore(Protocol):
    """Research runs and their event logs.

    Every method is one transaction. On a shared database (PostgreSQL) ``save`` also checks
    that the caller still holds the run (``lease_owner``), raising LeaseLost otherwise.
    """

    async def create_run(self, run: RunRecord) -> None:
        """Insert a new run."""
        ...

    async def save(self, run: RunRecord, events: Sequence[StoredEvent]) -> None:
        """Update the run's row and append ``events``, atomically."""
        ...

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or None."""
        ...

    async def list_runs(
        self, limit: int, offset: int, owner: str | None = None
    ) -> tuple[list[RunRecord], int]:
        """A page of the owner's runs (everyone's for None), newest first, and their total."""
        ...

    async def events_after(self, run_id: str, after: int, limit: int) -> list[StoredEvent]:
        """Up to ``limit`` events with ``seq > after``, in order."""
        ...

    async def runs_with_status(self, status: str) -> list[RunRecord]:
        """Every run whose status is ``status`` (e.g. runs left ``running`` by a crash)."""
        ...

    async def expire(self, finished_before: float) -> int:
        """Delete runs (and their events) that finished before the given time; how many."""
        ...

    async def close(self) -> None:
        """Release the database."""
        ...


class RunQueue(ResearchStore, Protocol):
    """A shared store (PostgreSQL) that also queues runs for research workers."""

    async def admit(self, run: RunRecord, cap: int) -> bool:
        """Insert ``run`` unless ``cap`` runs are queued or running across every replica."""
        ...

    async def in_flight(self) -> int:
        """Runs queued or running across every replica."""
        ...

    async def claim(self, worker: str, lease_s: float) -> RunRecord | None:
        """Take a queued run (or one whose lease ran out) for ``worker``; None if none."""
        ...

    async def renew(self, run_id: str, worker: str, lease_s: float) -> str | None:
        """Extend the lease; the control request waiting (taken). Raises LeaseLost."""
        ...

    async def save_as(
        self, run: RunRecord, events: Sequence[StoredEvent], holder: str | None
    ) -> None:
        """``save`` on behalf of ``holder``. Raises LeaseLost."""
        ...

    async def request(self, run_id: str, control: str) -> bool:
        """Leave a control request for the worker holding a running run."""
        ...

    async def requeue(self, run: RunRecord) -> bool:
        """Queue a finished run again (a resume)."""
        ...

    async def cancel_queued(self, run: RunRecord, event: StoredEvent) -> bool:
        """End a run no worker claimed yet as cancelled."""
        ...


class Wakeups(Protocol):
    """Cross-process wake-ups (PostgreSQL LISTEN/NOTIFY: adapters/store/notify.py)."""

    def token(self, channel: str, key: str) -> Any:
        """Take before reading; ``wait`` returns at once if a wake-up came since."""
        ...

    async def wait(self, channel: str, key: str, token: Any, timeout: float) -> bool:
        """Wait for a wake-up about ``key``; False after ``timeout``."""
        ...
