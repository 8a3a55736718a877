"""Sessions in PostgreSQL: the ``SessionDB`` of adapters/store/session_db.py on a psycopg pool, same
tables (from the same numbered migrations), same statements up to the placeholders."""

from __future__ import annotations

from typing import Any, cast

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from orchestrator.adapters.store.pg import open_pool
from orchestrator.core.sessions import TURN_COLUMNS, Kind, Session, Turn

# Built from constants only (no caller text): S608's string-built SQL is safe here.
_TURNS = (
    f"SELECT {TURN_COLUMNS} FROM session_turns "  # noqa: S608
    "WHERE owner = %s AND session_id = %s ORDER BY idx"
)
_INSERT_TURN = (
    f"INSERT INTO session_turns (owner, session_id, idx, {TURN_COLUMNS}) "  # noqa: S608
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


class PgSessionDB:
    """Sessions and turns in PostgreSQL; open with :meth:`open`."""

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[Any]]) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str, max_size: int = 10) -> PgSessionDB:
        """Connect to ``url`` and migrate it."""
        return cls(await open_pool(url, max_size))

    async def close(self) -> None:
        """Close the pool."""
        await self._pool.close()

    async def load(self, owner: str, session_id: str) -> Session | None:
        """The owner's stored session with its turns, or None."""
        key = (owner, session_id)
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT title, kind, created FROM sessions WHERE owner = %s AND id = %s", key
            )
            row = await cur.fetchone()
            if row is None:
                return None
            cur = await conn.execute(_TURNS, key)
            turns = [Turn.from_row(r) for r in await cur.fetchall()]
        kind = cast(Kind, row[1] if row[1] in ("chat", "research") else "chat")
        return Session(session_id, row[2], 0.0, turns, title=row[0], kind=kind, owner=owner)

    async def save(self, session: Session) -> None:
        """Store the session's title and turns as they are now (one transaction)."""
        owner, sid = session.key
        turns = [(owner, sid, i, *t.as_row()) for i, t in enumerate(session.turns)]
        row = (owner, sid, session.title, session.kind, session.created, session.updated)
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO sessions (owner, id, title, kind, created, updated) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (owner, id) DO UPDATE SET "
                "title = excluded.title, kind = excluded.kind, updated = excluded.updated",
                row,
            )
            await conn.execute(
                "DELETE FROM session_turns WHERE owner = %s AND session_id = %s", session.key
            )
            if turns:
                async with conn.cursor() as cur:
                    await cur.executemany(_INSERT_TURN, turns)

    async def delete(self, owner: str, session_id: str) -> bool:
        """Forget the owner's stored session and its turns."""
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "DELETE FROM sessions WHERE owner = %s AND id = %s", (owner, session_id)
            )
            return cur.rowcount > 0

    async def page(
        self, owner: str | None, offset: int, limit: int
    ) -> tuple[list[dict[str, Any]], int]:
        """The owner's summaries (everyone's for None) newest first and the total (sessions with
        at least one turn)."""
        who = (owner, owner)
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT s.owner, s.id, s.title, s.kind, s.created, s.updated, COUNT(t.idx), "
                "(SELECT question FROM session_turns f "
                " WHERE f.owner = s.owner AND f.session_id = s.id AND f.idx = 0) "
                "FROM sessions s JOIN session_turns t ON t.owner = s.owner AND t.session_id = s.id "
                "WHERE (%s::text IS NULL OR s.owner = %s) "
                "GROUP BY s.owner, s.id ORDER BY s.updated DESC, s.owner, s.id LIMIT %s OFFSET %s",
                (*who, limit, offset),
            )
            rows = await cur.fetchall()
            cur = await conn.execute(
                "SELECT COUNT(*) FROM (SELECT DISTINCT owner, session_id FROM session_turns "
                "WHERE (%s::text IS NULL OR owner = %s)) d",
                who,
            )
            total = await cur.fetchone()
        items = [
            {
                "session_id": sid,
                "owner": own,
                "title": title or first or "",
                "type": kind,
                "created": created,
                "updated": updated,
                "turns": count,
            }
            for own, sid, title, kind, created, updated, count, first in rows
        ]
        return items, int(total[0]) if total else 0
