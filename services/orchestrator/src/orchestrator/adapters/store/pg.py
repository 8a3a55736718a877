"""The research store on PostgreSQL: the ``ResearchStore`` operations plus the run queue that
research workers claim from (``SELECT … FOR UPDATE SKIP LOCKED``, held by a renewed lease).

psycopg 3's async connections from a ``psycopg_pool`` pool: each method borrows a connection for
one short transaction and gives it back, so no transaction ever waits on the LLM or the network.
Event appends send ``NOTIFY quarry_events`` in the same transaction (delivered at commit, so a
listener that wakes always finds the events committed); control requests send
``NOTIFY quarry_control``. See adapters/store/notify.py for the listening side.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import orjson
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from orchestrator.adapters.store.pg_migrate import migrate_pg
from orchestrator.core.store import (
    CONTROL_CHANNEL,
    EVENTS_CHANNEL,
    QUEUE_CHANNEL,
    RUN_COLUMNS,
    LeaseLost,
    RunRecord,
    StoredEvent,
)

logger = logging.getLogger(__name__)

#: Statuses of runs that hold a place in the cluster-wide cap (and KEDA's queue depth).
IN_FLIGHT = ("queued", "running")
# Advisory lock serialising admissions, so two replicas cannot both take the last place.
_ADMIT_KEY = 0x71756172727901

_COLUMNS = RUN_COLUMNS + ", lease_owner"
# Built from constants only (no caller text): S608's string-built SQL is safe here.
_SELECT = f"SELECT {_COLUMNS} FROM research_runs"  # noqa: S608
_INSERT = (
    f"INSERT INTO research_runs ({_COLUMNS}) "  # noqa: S608
    "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
)

# The oldest queued run, or a running one whose lease ran out.
_CLAIM = (
    "UPDATE research_runs SET status='running', lease_owner=%s, lease_until=%s, "  # noqa: S608
    "finished_at=NULL WHERE id = (SELECT id FROM research_runs "
    "WHERE status='queued' OR (status='running' AND lease_until < %s) "
    f"ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING {_COLUMNS}"
)


def _row(run: RunRecord) -> tuple[Any, ...]:
    return (*run.as_row(), run.lease_owner)


async def open_pool(url: str, max_size: int) -> AsyncConnectionPool[AsyncConnection[Any]]:
    """A connection pool to ``url`` (autocommit: transactions are explicit), migrated.

    Raises:
        psycopg.OperationalError: the server cannot be reached (after the pool's timeout).
        MigrationError: the database's schema is newer than this build.
    """
    pool: AsyncConnectionPool[AsyncConnection[Any]] = AsyncConnectionPool(
        url, min_size=1, max_size=max_size, kwargs={"autocommit": True}, open=False, timeout=30
    )
    await pool.open(wait=True, timeout=30)
    try:
        async with pool.connection() as conn:
            applied = await migrate_pg(conn)
        if applied:
            logger.info("database migrated", extra={"versions": applied})
    except BaseException:
        await pool.close()
        raise
    return pool


class PgStore:
    """``ResearchStore`` and the research queue over a PostgreSQL pool."""

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[Any]], own: bool = True) -> None:
        self.pool = pool
        self._own = own

    @classmethod
    async def open(cls, url: str, max_size: int = 10) -> PgStore:
        """Connect to ``url`` and migrate it."""
        return cls(await open_pool(url, max_size))

    async def close(self) -> None:
        """Close the pool (if this store opened it)."""
        if self._own:
            await self.pool.close()

    async def create_run(self, run: RunRecord) -> None:
        """Insert a new run."""
        async with self.pool.connection() as conn:
            await conn.execute(_INSERT, _row(run))

    async def admit(self, run: RunRecord, cap: int) -> bool:
        """Insert ``run`` unless ``cap`` runs are queued or running across every replica."""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_ADMIT_KEY,))
            cur = await conn.execute(
                "SELECT count(*) FROM research_runs WHERE status = ANY(%s)", (list(IN_FLIGHT),)
            )
            row = await cur.fetchone()
            if row is not None and int(row[0]) >= cap:
                return False
            await conn.execute(_INSERT, _row(run))
            await conn.execute("SELECT pg_notify(%s, '')", (QUEUE_CHANNEL,))
        return True

    async def save(self, run: RunRecord, events: Sequence[StoredEvent]) -> None:
        """Update the run and append ``events`` in one transaction.

        Raises:
            LeaseLost: ``run.lease_owner`` no longer holds the run.
        """
        await self.save_as(run, events, run.lease_owner)

    async def save_as(
        self, run: RunRecord, events: Sequence[StoredEvent], holder: str | None
    ) -> None:
        """``save`` on behalf of ``holder``, who may hand the run on (``run.lease_owner``
        None: released, e.g. queued again by a worker that is stopping).

        Raises:
            LeaseLost: ``holder`` no longer holds the run.
        """
        state = orjson.dumps(run.state).decode()
        rows = [(run.id, e.seq, e.type, orjson.dumps(e.data).decode()) for e in events]
        last = max([run.last_seq, *(e.seq for e in events)])
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "UPDATE research_runs SET status=%s, phase=%s, state=%s, updated_at=%s, "
                "finished_at=%s, last_seq=GREATEST(last_seq, %s), lease_owner=%s "
                "WHERE id=%s AND lease_owner IS NOT DISTINCT FROM %s",
                (
                    *(run.status, run.phase, state, run.updated_at, run.finished_at, last),
                    *(run.lease_owner, run.id, holder),
                ),
            )
            if cur.rowcount == 0:
                raise LeaseLost(run.id)
            if rows:
                async with conn.cursor() as c:
                    await c.executemany(
                        "INSERT INTO research_events (run_id, seq, type, data) "
                        "VALUES (%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                        rows,
                    )
            await conn.execute("SELECT pg_notify(%s, %s)", (EVENTS_CHANNEL, run.id))
            if run.status == "queued":  # handed back by a stopping worker: another takes it
                await conn.execute("SELECT pg_notify(%s, '')", (QUEUE_CHANNEL,))

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or None."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(_SELECT + " WHERE id=%s", (run_id,))
            row = await cur.fetchone()
        return RunRecord.from_row(row) if row else None

    async def list_runs(
        self, limit: int, offset: int, owner: str | None = None
    ) -> tuple[list[RunRecord], int]:
        """A page of the owner's runs (everyone's for None), newest first, and their total."""
        who = (owner, owner)
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                _SELECT + " WHERE (%s::text IS NULL OR owner=%s) "
                "ORDER BY created_at DESC, id LIMIT %s OFFSET %s",
                (*who, limit, offset),
            )
            rows = await cur.fetchall()
            cur = await conn.execute(
                "SELECT count(*) FROM research_runs WHERE (%s::text IS NULL OR owner=%s)", who
            )
            total = await cur.fetchone()
        return [RunRecord.from_row(r) for r in rows], int(total[0]) if total else 0

    async def events_after(self, run_id: str, after: int, limit: int) -> list[StoredEvent]:
        """Up to ``limit`` events after ``after``, in order."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT seq, type, data FROM research_events WHERE run_id=%s AND seq>%s "
                "ORDER BY seq LIMIT %s",
                (run_id, after, limit),
            )
            rows = await cur.fetchall()
        return [StoredEvent(r[0], r[1], orjson.loads(r[2])) for r in rows]

    async def runs_with_status(self, status: str) -> list[RunRecord]:
        """Every run with ``status``."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(_SELECT + " WHERE status=%s", (status,))
            rows = await cur.fetchall()
        return [RunRecord.from_row(r) for r in rows]

    async def expire(self, finished_before: float) -> int:
        """Delete runs that finished before ``finished_before`` (events cascade)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "DELETE FROM research_runs WHERE finished_at IS NOT NULL AND finished_at<%s",
                (finished_before,),
            )
            return cur.rowcount

    async def in_flight(self) -> int:
        """Runs queued or running across every replica."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM research_runs WHERE status = ANY(%s)", (list(IN_FLIGHT),)
            )
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    # --- the queue ---

    async def claim(self, worker: str, lease_s: float) -> RunRecord | None:
        """Take the oldest queued run, or a running one whose lease ran out; None if none.

        ``SKIP LOCKED``: two workers claiming at once never block on, nor both get, one row.
        """
        now = time.time()
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                _CLAIM,
                (worker, now + lease_s, now),
            )
            row = await cur.fetchone()
        return RunRecord.from_row(row) if row else None

    async def renew(self, run_id: str, worker: str, lease_s: float) -> str | None:
        """Extend ``worker``'s lease; the control request waiting for it (taken), if any.

        Raises:
            LeaseLost: another worker holds the run now.
        """
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT control FROM research_runs WHERE id=%s AND lease_owner=%s FOR UPDATE",
                (run_id, worker),
            )
            row = await cur.fetchone()
            if row is None:
                raise LeaseLost(run_id)
            await conn.execute(
                "UPDATE research_runs SET lease_until=%s, control=NULL WHERE id=%s",
                (time.time() + lease_s, run_id),
            )
        return str(row[0]) if row[0] is not None else None

    async def request(self, run_id: str, control: str) -> bool:
        """Leave ``control`` for the worker holding a running run and wake it; False when the
        run is not running."""
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "UPDATE research_runs SET control=%s WHERE id=%s AND status='running'",
                (control, run_id),
            )
            if cur.rowcount == 0:
                return False
            await conn.execute("SELECT pg_notify(%s, %s)", (CONTROL_CHANNEL, run_id))
        return True

    async def requeue(self, run: RunRecord) -> bool:
        """Queue a run again (a resume), unless it is queued or running already."""
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "UPDATE research_runs SET status='queued', state=%s, finished_at=NULL, "
                "lease_owner=NULL, lease_until=NULL, control=NULL, updated_at=%s "
                "WHERE id=%s AND status <> ALL(%s)",
                (orjson.dumps(run.state).decode(), time.time(), run.id, list(IN_FLIGHT)),
            )
            if cur.rowcount == 0:
                return False
            await conn.execute("SELECT pg_notify(%s, '')", (QUEUE_CHANNEL,))
        return True

    async def cancel_queued(self, run: RunRecord, event: StoredEvent) -> bool:
        """End a run no worker has claimed yet as cancelled; False if one claimed it."""
        async with self.pool.connection() as conn, conn.transaction():
            now = time.time()
            cur = await conn.execute(
                "UPDATE research_runs SET status='cancelled', finished_at=%s, updated_at=%s, "
                "last_seq=%s WHERE id=%s AND status='queued'",
                (now, now, event.seq, run.id),
            )
            if cur.rowcount == 0:
                return False
            await conn.execute(
                "INSERT INTO research_events (run_id, seq, type, data) VALUES (%s,%s,%s,%s)",
                (run.id, event.seq, event.type, orjson.dumps(event.data).decode()),
            )
            await conn.execute("SELECT pg_notify(%s, %s)", (EVENTS_CHANNEL, run.id))
        return True
