"""Settings overrides in SQLite (``settings`` table, migrations/0006_settings.sql), or in memory
when there is no data directory. Values are JSON; the caller validates them (overrides.py)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from orchestrator.adapters.store.migrate import load_migrations, migrate
from orchestrator.adapters.store.sqlite import DB_FILE


class SettingsDB(Protocol):
    """Where overrides are kept."""

    async def load(self) -> dict[str, Any]:
        """Every stored override, by setting name."""
        ...

    async def save(self, changed: Mapping[str, Any], removed: list[str], by: str) -> None:
        """Store ``changed`` and forget ``removed``, in one transaction."""
        ...

    async def close(self) -> None:
        """Release the database."""
        ...


class MemorySettingsDB:
    """Overrides for this process only (no ``ORCHESTRATOR_DATA_DIR``)."""

    def __init__(self) -> None:
        """Empty."""
        self._values: dict[str, Any] = {}

    async def load(self) -> dict[str, Any]:
        """See SettingsDB."""
        return dict(self._values)

    async def save(self, changed: Mapping[str, Any], removed: list[str], by: str) -> None:
        """See SettingsDB."""
        self._values.update(changed)
        for name in removed:
            self._values.pop(name, None)

    async def close(self) -> None:
        """Nothing to release."""


class SqliteSettingsDB:
    """Overrides in ``{data_dir}/quarry.sqlite3``; open with :meth:`open`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    @classmethod
    async def open(cls, data_dir: str) -> SqliteSettingsDB:
        """Create the folder and database if needed, and migrate it."""

        def connect() -> sqlite3.Connection:
            Path(data_dir).mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                Path(data_dir) / DB_FILE, check_same_thread=False, isolation_level=None
            )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA busy_timeout = 5000")
            migrate(conn, load_migrations())
            return conn

        return cls(await asyncio.to_thread(connect))

    async def load(self) -> dict[str, Any]:
        """See SettingsDB."""

        def read() -> dict[str, Any]:
            with self._lock:
                rows = self._conn.execute("SELECT name, value FROM settings").fetchall()
            return {name: json.loads(value) for name, value in rows}

        return await asyncio.to_thread(read)

    async def save(self, changed: Mapping[str, Any], removed: list[str], by: str) -> None:
        """See SettingsDB."""
        now = time.time()
        rows = [(k, json.dumps(v), now, by) for k, v in changed.items()]

        def write() -> None:
            with self._lock, self._conn:
                self._conn.execute("BEGIN")
                self._conn.executemany(
                    "INSERT INTO settings (name, value, updated_at, updated_by) VALUES (?,?,?,?) "
                    "ON CONFLICT(name) DO UPDATE SET value = excluded.value, "
                    "updated_at = excluded.updated_at, updated_by = excluded.updated_by",
                    rows,
                )
                self._conn.executemany(
                    "DELETE FROM settings WHERE name = ?", [(n,) for n in removed]
                )

        await asyncio.to_thread(write)

    async def close(self) -> None:
        """Close the connection."""

        def close() -> None:
            with self._lock:
                self._conn.close()

        await asyncio.to_thread(close)
