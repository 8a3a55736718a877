"""The research store on SQLite: one connection, used by one worker thread.

Why sqlite3 in a thread and not aiosqlite: each store method is one plain function run whole on
the connection's thread, so it is one transaction by construction; with aiosqlite every
statement is its own awaitable, and a multi-statement transaction would need a lock held across
awaits. The standard library is enough, and the event loop never touches the disk.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import orjson

from orchestrator.adapters.store.migrate import load_migrations, migrate
from orchestrator.core.store import RunRecord, StoredEvent

logger = logging.getLogger(__name__)

T = TypeVar("T")

DB_FILE = "quarry.sqlite3"
_COLUMNS = (
    "id, query, mode, status, phase, session_id, state, created_at, updated_at, finished_at, "
    "last_seq, owner"
)


# Built from constants only (no caller text): S608's string-built SQL is safe here.
_INSERT = f"INSERT INTO research_runs ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"  # noqa: S608
_SELECT = f"SELECT {_COLUMNS} FROM research_runs"  # noqa: S608


def _record(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord(
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
    )


class SqliteStore:
    """``ResearchStore`` over one SQLite file (or ``:memory:``)."""

    def __init__(self, conn: sqlite3.Connection, executor: ThreadPoolExecutor) -> None:
        self._conn = conn
        self._executor = executor

    @classmethod
    async def open(cls, data_dir: str) -> SqliteStore:
        """Open (creating and migrating) ``{data_dir}/quarry.sqlite3``; in memory when empty."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        path = str(Path(data_dir) / DB_FILE) if data_dir else ":memory:"

        def connect() -> sqlite3.Connection:
            if data_dir:
                Path(data_dir).mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA foreign_keys = ON")
            if data_dir:
                # WAL: readers never wait for the writer; NORMAL is durable across crashes of
                # the process (only a power cut can lose the last transactions).
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA busy_timeout = 5000")
            applied = migrate(conn, load_migrations())
            if applied:
                logger.info("database migrated", extra={"path": path, "versions": applied})
            return conn

        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, connect)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(conn, executor)

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        # Shielded: a cancelled caller stops waiting, but a started write still completes (in
        # order, on the one thread), so a run's last save is never lost half-way.
        loop = asyncio.get_running_loop()
        return await asyncio.shield(loop.run_in_executor(self._executor, fn, self._conn))

    async def create_run(self, run: RunRecord) -> None:
        """Insert a new run."""
        row = (
            run.id,
            run.query,
            run.mode,
            run.status,
            run.phase,
            run.session_id,
            orjson.dumps(run.state).decode(),
            run.created_at,
            run.updated_at,
            run.finished_at,
            run.last_seq,
            run.owner,
        )

        def insert(conn: sqlite3.Connection) -> None:
            conn.execute(_INSERT, row)

        await self._run(insert)

    async def save(self, run: RunRecord, events: Sequence[StoredEvent]) -> None:
        """Update the run and append ``events`` in one transaction (re-saved events are kept)."""
        state = orjson.dumps(run.state).decode()
        rows = [(run.id, e.seq, e.type, orjson.dumps(e.data).decode()) for e in events]
        last = max([run.last_seq, *(e.seq for e in events)])
        params = (run.status, run.phase, state, run.updated_at, run.finished_at, last, run.id)

        def write(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
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

        await self._run(write)

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or None."""

        def read(conn: sqlite3.Connection) -> RunRecord | None:
            row = conn.execute(_SELECT + " WHERE id=?", (run_id,)).fetchone()
            return _record(row) if row else None

        return await self._run(read)

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
            return [_record(r) for r in rows], int(total)

        return await self._run(read)

    async def events_after(self, run_id: str, after: int, limit: int) -> list[StoredEvent]:
        """Up to ``limit`` events after ``after``, in order."""

        def read(conn: sqlite3.Connection) -> list[StoredEvent]:
            rows = conn.execute(
                "SELECT seq, type, data FROM research_events WHERE run_id=? AND seq>? "
                "ORDER BY seq LIMIT ?",
                (run_id, after, limit),
            ).fetchall()
            return [StoredEvent(r[0], r[1], orjson.loads(r[2])) for r in rows]

        return await self._run(read)

    async def runs_with_status(self, status: str) -> list[RunRecord]:
        """Every run with ``status``."""

        def read(conn: sqlite3.Connection) -> list[RunRecord]:
            rows = conn.execute(_SELECT + " WHERE status=?", (status,)).fetchall()
            return [_record(r) for r in rows]

        return await self._run(read)

    async def expire(self, finished_before: float) -> int:
        """Delete runs that finished before ``finished_before`` (events cascade)."""

        def delete(conn: sqlite3.Connection) -> int:
            with _transaction(conn):
                cur = conn.execute(
                    "DELETE FROM research_runs WHERE finished_at IS NOT NULL AND finished_at<?",
                    (finished_before,),
                )
                return cur.rowcount

        return await self._run(delete)

    async def close(self) -> None:
        """Close the connection and stop the thread."""
        await self._run(lambda conn: conn.close())
        self._executor.shutdown(wait=True)


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
