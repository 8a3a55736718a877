"""Schedules in SQLite (``schedules`` table, migrations/0007_schedules.sql); the statements are
shared with PostgreSQL (pg_schedules.py), which differs only in placeholders and connections.

Every scheduler write is one conditional UPDATE (the row as the caller read it), which is what
makes replicas safe on PostgreSQL: of two replicas claiming one firing, the second one's UPDATE
re-reads the row the first changed, matches nothing, and that replica moves on.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.adapters.store.migrate import load_migrations, migrate
from orchestrator.adapters.store.sqlite import DB_FILE
from orchestrator.core.schedules.model import STARTING, Outcome, Schedule

COLUMNS = (
    "id, owner, name, query, mode, sources, cron, timezone, paused, created_at, updated_at, "
    "next_run_at, webhook_url, webhook_secret, pending_run_id, pending_since, last_run_id, "
    "last_run_at, last_status, last_error, last_changes, baseline, runs, notified_at"
)
# Built from constants only (no caller text): S608's string-built SQL is safe here.
SELECT = f"SELECT {COLUMNS} FROM schedules"  # noqa: S608
INSERT = f"INSERT INTO schedules ({COLUMNS}) VALUES ({', '.join('?' * 24)})"  # noqa: S608
UPDATE = (
    "UPDATE schedules SET name=?, query=?, mode=?, sources=?, cron=?, timezone=?, paused=?, "
    "webhook_url=?, webhook_secret=?, next_run_at=?, updated_at=? WHERE id=?"
)
CLAIM = (
    "UPDATE schedules SET next_run_at=?, pending_run_id=?, pending_since=? "
    "WHERE id=? AND next_run_at=? AND paused=0 AND pending_run_id IS NULL"
)
CLAIM_NOW = (
    "UPDATE schedules SET pending_run_id=?, pending_since=? WHERE id=? AND pending_run_id IS NULL"
)
SKIP = "UPDATE schedules SET next_run_at=?, last_error=? WHERE id=? AND next_run_at=?"
STARTED = "UPDATE schedules SET pending_run_id=?, last_error=NULL WHERE id=? AND pending_run_id=?"
NOT_STARTED = (
    "UPDATE schedules SET pending_run_id=NULL, pending_since=NULL, last_error=?, last_run_at=? "
    "WHERE id=? AND pending_run_id=?"
)
FINISH = (
    "UPDATE schedules SET pending_run_id=NULL, pending_since=NULL, last_run_id=?, last_run_at=?, "
    "last_status=?, last_error=?, last_changes=?, baseline=COALESCE(?, baseline), runs=runs+1 "
    "WHERE id=? AND pending_run_id=?"
)
NOTIFIED = "UPDATE schedules SET notified_at=?, last_error=COALESCE(?, last_error) WHERE id=?"


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def to_row(s: Schedule) -> tuple[Any, ...]:
    """The INSERT's parameters."""
    return (
        *(s.id, s.owner, s.name, s.query, s.mode, _json(s.sources), s.cron, s.timezone),
        *(int(s.paused), s.created_at, s.updated_at, s.next_run_at, s.webhook_url),
        *(s.webhook_secret, s.pending_run_id, s.pending_since, s.last_run_id, s.last_run_at),
        *(s.last_status, s.last_error, _json(s.last_changes), _json(s.baseline), s.runs),
        s.notified_at,
    )


def from_row(row: Sequence[Any]) -> Schedule:
    """A row of SELECT as a Schedule."""
    return Schedule(
        *(row[0], row[1], row[2], row[3], row[4], _loads(row[5]), row[6], row[7], bool(row[8])),
        *(row[9], row[10], row[11], row[12], row[13], row[14], row[15], row[16], row[17]),
        *(row[18], row[19], _loads(row[20]), _loads(row[21]), int(row[22]), row[23]),
    )


class ScheduleSQL:
    """Every ScheduleStore operation, over ``_execute`` and ``_fetch`` (one transaction each)."""

    async def _execute(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    async def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError

    async def close(self) -> None:
        """Release the database."""
        raise NotImplementedError

    async def create(self, schedule: Schedule) -> None:
        """See ScheduleStore."""
        await self._execute(INSERT, to_row(schedule))

    async def get(self, schedule_id: str) -> Schedule | None:
        """See ScheduleStore."""
        rows = await self._fetch(SELECT + " WHERE id=?", (schedule_id,))
        return from_row(rows[0]) if rows else None

    async def list_page(
        self, owner: str | None, limit: int, offset: int
    ) -> tuple[list[Schedule], int]:
        """See ScheduleStore."""
        where, args = (" WHERE owner=?", (owner,)) if owner is not None else ("", ())
        rows = await self._fetch(
            f"{SELECT}{where} ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        total = await self._fetch(f"SELECT count(*) FROM schedules{where}", args)  # noqa: S608
        return [from_row(r) for r in rows], int(total[0][0])

    async def count(self, owner: str) -> int:
        """See ScheduleStore."""
        rows = await self._fetch("SELECT count(*) FROM schedules WHERE owner=?", (owner,))
        return int(rows[0][0])

    async def update(self, s: Schedule) -> bool:
        """See ScheduleStore."""
        args = (s.name, s.query, s.mode, _json(s.sources), s.cron, s.timezone, int(s.paused))
        more = (s.webhook_url, s.webhook_secret, s.next_run_at, s.updated_at, s.id)
        return await self._execute(UPDATE, (*args, *more)) > 0

    async def delete(self, schedule_id: str) -> bool:
        """See ScheduleStore."""
        return await self._execute("DELETE FROM schedules WHERE id=?", (schedule_id,)) > 0

    async def due(self, now: float) -> list[Schedule]:
        """See ScheduleStore."""
        rows = await self._fetch(
            SELECT + " WHERE paused=0 AND next_run_at <= ? ORDER BY next_run_at", (now,)
        )
        return [from_row(r) for r in rows]

    async def claim(
        self, schedule_id: str, expected_next: float | None, next_run_at: float | None, now: float
    ) -> bool:
        """See ScheduleStore."""
        if expected_next is None:
            return await self._execute(CLAIM_NOW, (STARTING, now, schedule_id)) > 0
        args = (next_run_at, STARTING, now, schedule_id, expected_next)
        return await self._execute(CLAIM, args) > 0

    async def skip(
        self, schedule_id: str, expected_next: float, next_run_at: float | None, reason: str
    ) -> bool:
        """See ScheduleStore."""
        return await self._execute(SKIP, (next_run_at, reason, schedule_id, expected_next)) > 0

    async def started(self, schedule_id: str, run_id: str, now: float) -> None:
        """See ScheduleStore."""
        await self._execute(STARTED, (run_id, schedule_id, STARTING))

    async def not_started(self, schedule_id: str, error: str, now: float) -> None:
        """See ScheduleStore."""
        await self._execute(NOT_STARTED, (error, now, schedule_id, STARTING))

    async def pending(self) -> list[Schedule]:
        """See ScheduleStore."""
        rows = await self._fetch(SELECT + " WHERE pending_run_id IS NOT NULL", ())
        return [from_row(r) for r in rows]

    async def finish(self, schedule_id: str, o: Outcome) -> bool:
        """See ScheduleStore."""
        args = (o.run_id, o.at, o.status, o.error, _json(o.changes), _json(o.baseline))
        return await self._execute(FINISH, (*args, schedule_id, o.run_id)) > 0

    async def notified(self, schedule_id: str, now: float, error: str | None) -> None:
        """See ScheduleStore."""
        await self._execute(NOTIFIED, (now, error, schedule_id))


class SqliteScheduleDB(ScheduleSQL):
    """Schedules in ``{data_dir}/quarry.sqlite3`` (in memory without a data directory)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    @classmethod
    async def open(cls, data_dir: str) -> SqliteScheduleDB:
        """Create the folder and database if needed, and migrate it."""

        def connect() -> sqlite3.Connection:
            path = ":memory:"
            if data_dir:
                Path(data_dir).mkdir(parents=True, exist_ok=True)
                path = str(Path(data_dir) / DB_FILE)
            conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            if data_dir:
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA busy_timeout = 5000")
            migrate(conn, load_migrations())
            return conn

        return cls(await asyncio.to_thread(connect))

    async def _execute(self, sql: str, params: Sequence[Any]) -> int:
        def run() -> int:
            with self._lock:
                return self._conn.execute(sql, tuple(params)).rowcount

        return await asyncio.to_thread(run)

    async def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        def run() -> list[Sequence[Any]]:
            with self._lock:
                return list(self._conn.execute(sql, tuple(params)).fetchall())

        return await asyncio.to_thread(run)

    async def close(self) -> None:
        """Close the connection."""

        def close() -> None:
            with self._lock:
                self._conn.close()

        await asyncio.to_thread(close)
