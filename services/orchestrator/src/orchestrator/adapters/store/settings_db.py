"""Settings overrides in SQLite (``settings`` table, migrations/0006_settings.sql), or in memory
when there is no data directory. Values are JSON; the caller validates them (overrides.py)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from typing import Any, Protocol

from orchestrator.adapters.store.sqlite_db import SqliteDB, transaction


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
    """Overrides in ``{data_dir}/quarry.sqlite3`` (adapters/store/sqlite_db.py); open with
    :meth:`open`."""

    def __init__(self, db: SqliteDB) -> None:
        self._db = db

    @classmethod
    async def open(cls, data_dir: str) -> SqliteSettingsDB:
        """Create the folder and database if needed, and migrate it."""
        return cls(await SqliteDB.open(data_dir))

    async def load(self) -> dict[str, Any]:
        """See SettingsDB."""

        def read(conn: sqlite3.Connection) -> list[tuple[str, str]]:
            return conn.execute("SELECT name, value FROM settings").fetchall()

        return {name: json.loads(value) for name, value in await self._db.run(read)}

    async def save(self, changed: Mapping[str, Any], removed: list[str], by: str) -> None:
        """See SettingsDB."""
        now = time.time()
        rows = [(k, json.dumps(v), now, by) for k, v in changed.items()]

        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                conn.executemany(
                    "INSERT INTO settings (name, value, updated_at, updated_by) VALUES (?,?,?,?) "
                    "ON CONFLICT(name) DO UPDATE SET value = excluded.value, "
                    "updated_at = excluded.updated_at, updated_by = excluded.updated_by",
                    rows,
                )
                conn.executemany("DELETE FROM settings WHERE name = ?", [(n,) for n in removed])

        await self._db.run(write)

    async def close(self) -> None:
        """Close the connection."""
        await self._db.close()
