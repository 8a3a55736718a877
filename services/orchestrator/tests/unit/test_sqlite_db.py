"""The one SQLite wrapper (adapters/store/sqlite_db.py) under every SQLite store: the same
pragmas and migrations for each, writes that survive a cancelled caller, rollback on error."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from orchestrator.adapters.store.session_db import SqliteSessionDB
from orchestrator.adapters.store.settings_db import SqliteSettingsDB
from orchestrator.adapters.store.sqlite import SqliteStore
from orchestrator.adapters.store.sqlite_db import SqliteDB, transaction


def _pragmas(conn: sqlite3.Connection) -> tuple[Any, ...]:
    names = ("journal_mode", "foreign_keys", "synchronous", "busy_timeout")
    return tuple(conn.execute(f"PRAGMA {name}").fetchone()[0] for name in names)


@pytest.mark.parametrize("store", [SqliteStore, SqliteSessionDB, SqliteSettingsDB])
async def test_every_sqlite_store_opens_the_same_way(store: Any, tmp_path: Path) -> None:
    # The settings store used to skip foreign_keys and synchronous=NORMAL; the session store
    # synchronous=NORMAL: each had its own copy of the connection setup.
    opened = await store.open(str(tmp_path))
    try:
        db: SqliteDB = opened._db
        assert await db.run(_pragmas) == ("wal", 1, 1, 5000)  # synchronous 1 = NORMAL
        tables = await db.run(lambda c: {r[0] for r in c.execute("SELECT name FROM sqlite_master")})
        assert {"research_runs", "sessions", "settings", "schema_version"} <= tables
    finally:
        await opened.close()


async def test_a_cancelled_caller_does_not_lose_its_write() -> None:
    db = await SqliteDB.open("")  # in memory
    go = threading.Event()

    def write(conn: sqlite3.Connection) -> None:
        go.wait(10)
        with transaction(conn):
            conn.execute("INSERT INTO settings VALUES ('mode', '\"speed\"', 0, 'me')")

    try:
        caller = asyncio.create_task(db.run(write))
        await asyncio.sleep(0)  # the write is on the thread, waiting
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        go.set()
        count = await db.run(lambda c: c.execute("SELECT COUNT(*) FROM settings").fetchone()[0])
        assert count == 1  # in order on the one thread: the write landed before the read
    finally:
        await db.close()


async def test_a_failed_transaction_leaves_nothing() -> None:
    db = await SqliteDB.open("")

    def half(conn: sqlite3.Connection) -> None:
        with transaction(conn):
            conn.execute("INSERT INTO settings VALUES ('a', '1', 0, 'me')")
            raise RuntimeError("stop half-way")

    try:
        with pytest.raises(RuntimeError):
            await db.run(half)
        assert await db.run(lambda c: c.execute("SELECT COUNT(*) FROM settings").fetchone()) == (0,)
    finally:
        await db.close()
