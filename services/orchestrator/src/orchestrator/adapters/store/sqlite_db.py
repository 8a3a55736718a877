"""The one SQLite wrapper under every SQLite store (research runs, sessions, settings): opening
the orchestrator's database file with its pragmas and migrations, and running store methods on
the connection's own thread.

Why sqlite3 in a thread and not aiosqlite: each store method is one plain function run whole on
the connection's thread, so it is one transaction by construction; with aiosqlite every
statement is its own awaitable, and a multi-statement transaction would need a lock held across
awaits. The standard library is enough, and the event loop never touches the disk.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from orchestrator.adapters.store.migrate import load_migrations, migrate

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The orchestrator's database file in ORCHESTRATOR_DATA_DIR (runs, sessions, settings).
DB_FILE = "quarry.sqlite3"


def connect(path: str | Path) -> sqlite3.Connection:
    """An autocommit connection to ``path`` (or ``":memory:"``) with the stores' pragmas, migrated.

    Raises:
        MigrationError: the file was written by a newer build.
    """
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        # WAL: readers never wait for the writer; NORMAL is durable across crashes of the
        # process (only a power cut can lose the last transactions).
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA busy_timeout = 5000")
    applied = migrate(conn, load_migrations())
    if applied:
        logger.info("database migrated", extra={"path": str(path), "versions": applied})
    return conn


class SqliteDB:
    """One connection, used only by one worker thread: calls run in order, one at a time."""

    def __init__(self, conn: sqlite3.Connection, executor: ThreadPoolExecutor) -> None:
        self._conn = conn
        self._executor = executor

    @classmethod
    async def open(cls, data_dir: str) -> SqliteDB:
        """Open (creating and migrating) ``{data_dir}/quarry.sqlite3``; in memory when empty."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")

        def opened() -> sqlite3.Connection:
            if not data_dir:
                return connect(":memory:")
            Path(data_dir).mkdir(parents=True, exist_ok=True)
            return connect(Path(data_dir) / DB_FILE)

        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, opened)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(conn, executor)

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)`` on the connection's thread.

        Shielded: a cancelled caller stops waiting, but a started write still completes (in
        order, on the one thread), so a run's last save is never lost half-way.
        """
        loop = asyncio.get_running_loop()
        return await asyncio.shield(loop.run_in_executor(self._executor, fn, self._conn))

    async def close(self) -> None:
        """Close the connection and stop the thread."""
        await self.run(lambda conn: conn.close())
        self._executor.shutdown(wait=True)


class transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on an autocommit connection: the write
    lock is taken at the start, so two writers never deadlock upgrading a read."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
