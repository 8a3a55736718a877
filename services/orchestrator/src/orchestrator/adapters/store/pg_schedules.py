"""Schedules in PostgreSQL: the statements of schedules_db.py on a psycopg pool (placeholders
``%s``). Replicas share the rows; each scheduler write is a conditional UPDATE that PostgreSQL
re-checks against the committed row, so one replica alone fires or finishes a given run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from orchestrator.adapters.store.pg import open_pool
from orchestrator.adapters.store.schedules_db import ScheduleSQL


class PgScheduleDB(ScheduleSQL):
    """Schedules over a PostgreSQL pool; open with :meth:`open`."""

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[Any]]) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, max_size: int = 4) -> PgScheduleDB:
        """Connect to ``url`` and migrate it."""
        return cls(await open_pool(url, max_size))

    async def _execute(self, sql: str, params: Sequence[Any]) -> int:
        async with self._pool.connection() as conn:
            cur = await conn.execute(sql.replace("?", "%s").encode(), tuple(params))
            return cur.rowcount

    async def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(sql.replace("?", "%s").encode(), tuple(params))
            return list(await cur.fetchall())

    async def close(self) -> None:
        """Close the pool."""
        await self._pool.close()
