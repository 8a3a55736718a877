"""The research store on SQLite, over the one SQLite wrapper (adapters/store/sqlite_db.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import orjson

from orchestrator.adapters.store.sqlite_db import DB_FILE, SqliteDB, transaction
from orchestrator.core.store import RUN_COLUMNS, RunRecord, StoredEvent

__all__ = ["DB_FILE", "SqliteStore"]

# Built from constants only (no caller text): S608's string-built SQL is safe here.
_INSERT = f"INSERT INTO research_runs ({RUN_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"  # noqa: S608
_SELECT = f"SELECT {RUN_COLUMNS} FROM research_runs"  # noqa: S608


class SqliteStore:
    """``ResearchStore`` over one SQLite file (or ``:memory:``)."""

    def __init__(self, db: SqliteDB) -> None:
        self._db = db

    @classmethod
    async def open(cls, data_dir: str) -> SqliteStore:
        """Open (creating and migrating) ``{data_dir}/quarry.sqlite3``; in memory when empty."""
        return cls(await SqliteDB.open(data_dir))

    async def create_run(self, run: RunRecord) -> None:
        """Insert a new run."""
        row = run.as_row()

        def insert(conn: sqlite3.Connection) -> None:
            conn.execute(_INSERT, row)

        await self._db.run(insert)

    async def save(self, run: RunRecord, events: Sequence[StoredEvent]) -> None:
        """Update the run and append ``events`` in one transaction (re-saved events are kept)."""
        state = orjson.dumps(run.state).decode()
        rows = [(run.id, e.seq, e.type, orjson.dumps(e.data).decode()) for e in events]
        last = max([run.last_seq, *(e.seq for e in events)])
        params = (run.status, run.phase, state, run.updated_at, run.finished_at, last, run.id)

        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.execute(
                    "UPDATE research_runs SET status=?, phase=?, state=?, updated_at=?, "
                    "finished_at=?, last_seq=MAX(last_seq, ?) WHERE id=?",
                    params,
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO research_events (run_id, seq, type, data) "
                    "VALUES (?,?,?,?)",
                    rows,
                )

        await self._db.run(write)

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or None."""

        def read(conn: sqlite3.Connection) -> RunRecord | None:
            row = conn.execute(_SELECT + " WHERE id=?", (run_id,)).fetchone()
            return RunRecord.from_row(row) if row else None

        return await self._db.run(read)

    async def list_runs(
        self, limit: int, offset: int, owner: str | None = None
    ) -> tuple[list[RunRecord], int]:
        """A page of the owner's runs (everyone's for None), newest first, and their total."""
        who = (owner, owner)

        def read(conn: sqlite3.Connection) -> tuple[list[RunRecord], int]:
            rows = conn.execute(
                _SELECT + " WHERE (? IS NULL OR owner=?) "
                "ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
                (*who, limit, offset),
            ).fetchall()
            total = conn.execute(
                "SELECT COUNT(*) FROM research_runs WHERE (? IS NULL OR owner=?)", who
            ).fetchone()[0]
            return [RunRecord.from_row(r) for r in rows], int(total)

        return await self._db.run(read)

    async def events_after(self, run_id: str, after: int, limit: int) -> list[StoredEvent]:
        """Up to ``limit`` events after ``after``, in order."""

        def read(conn: sqlite3.Connection) -> list[StoredEvent]:
            rows = conn.execute(
                "SELECT seq, type, data FROM research_events WHERE run_id=? AND seq>? "
                "ORDER BY seq LIMIT ?",
                (run_id, after, limit),
            ).fetchall()
            return [StoredEvent(r[0], r[1], orjson.loads(r[2])) for r in rows]

        return await self._db.run(read)

    async def runs_with_status(self, status: str) -> list[RunRecord]:
        """Every run with ``status``."""

        def read(conn: sqlite3.Connection) -> list[RunRecord]:
            rows = conn.execute(_SELECT + " WHERE status=?", (status,)).fetchall()
            return [RunRecord.from_row(r) for r in rows]

        return await self._db.run(read)

    async def expire(self, finished_before: float) -> int:
        """Delete runs that finished before ``finished_before`` (events cascade)."""

        def delete(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                cur = conn.execute(
                    "DELETE FROM research_runs WHERE finished_at IS NOT NULL AND finished_at<?",
                    (finished_before,),
                )
                return cur.rowcount

        return await self._db.run(delete)

    async def close(self) -> None:
        """Close the connection and stop the thread."""
        await self._db.close()
