"""Sessions in SQLite: the ``SessionDB`` under the session store, so conversations survive
restarts, each under its owner (``(owner, id)`` is the key), over the one SQLite wrapper
(adapters/store/sqlite_db.py: one connection, WAL, its own thread).

The tables live in the orchestrator's database file (``quarry.sqlite3``, beside the research
runs) and come from its numbered migrations (``migrations/0002_sessions.sql``, owners from
``0003_owners.sql``), applied at open.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any, cast

from orchestrator.adapters.store.sqlite_db import SqliteDB, transaction
from orchestrator.core.sessions import TURN_COLUMNS, Kind, Session, Turn

logger = logging.getLogger(__name__)

# Built from constants only (no caller text): S608's string-built SQL is safe here.
_TURNS = (
    f"SELECT {TURN_COLUMNS} FROM session_turns "  # noqa: S608
    "WHERE owner = ? AND session_id = ? ORDER BY idx"
)
_INSERT_TURN = (
    f"INSERT INTO session_turns (owner, session_id, idx, {TURN_COLUMNS}) "  # noqa: S608
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SqliteSessionDB:
    """Sessions and turns in ``{data_dir}/quarry.sqlite3``; open with :meth:`open`."""

    def __init__(self, db: SqliteDB) -> None:
        self._db = db

    @classmethod
    async def open(cls, data_dir: str) -> SqliteSessionDB:
        """Create the folder and the database if needed, and migrate it."""
        return cls(await SqliteDB.open(data_dir))

    async def close(self) -> None:
        """Close the connection."""
        await self._db.close()

    async def load(self, owner: str, session_id: str) -> Session | None:
        """The owner's stored session with its turns, or None."""
        key = (owner, session_id)

        def read(c: sqlite3.Connection) -> Session | None:
            row = c.execute(
                "SELECT title, kind, created FROM sessions WHERE owner = ? AND id = ?", key
            ).fetchone()
            if row is None:
                return None
            turns = [Turn.from_row(r) for r in c.execute(_TURNS, key)]
            kind = cast(Kind, row[1] if row[1] in ("chat", "research") else "chat")
            return Session(session_id, row[2], 0.0, turns, title=row[0], kind=kind, owner=owner)

        return await self._db.run(read)

    async def save(self, session: Session) -> None:
        """Store the session's title and turns as they are now (one transaction)."""
        owner, sid = session.key
        turns = [(owner, sid, i, *t.as_row()) for i, t in enumerate(session.turns)]
        row = (owner, sid, session.title, session.kind, session.created, session.updated)

        def write(c: sqlite3.Connection) -> None:
            with transaction(c):
                c.execute(
                    "INSERT INTO sessions (owner, id, title, kind, created, updated) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, id) DO UPDATE SET "
                    "title = excluded.title, kind = excluded.kind, updated = excluded.updated",
                    row,
                )
                c.execute(
                    "DELETE FROM session_turns WHERE owner = ? AND session_id = ?", session.key
                )
                c.executemany(_INSERT_TURN, turns)

        await self._db.run(write)

    async def delete(self, owner: str, session_id: str) -> bool:
        """Forget the owner's stored session and its turns."""

        def remove(c: sqlite3.Connection) -> bool:
            with transaction(c):
                cur = c.execute(
                    "DELETE FROM sessions WHERE owner = ? AND id = ?", (owner, session_id)
                )
                return cur.rowcount > 0

        return await self._db.run(remove)

    async def page(
        self, owner: str | None, offset: int, limit: int
    ) -> tuple[list[dict[str, Any]], int]:
        """The owner's summaries (everyone's for None) newest first and the total (sessions with
        at least one turn)."""
        # "? IS NULL OR owner = ?": one statement for both; the owner index serves the second.
        who = (owner, owner)

        def read(c: sqlite3.Connection) -> tuple[list[dict[str, Any]], int]:
            rows = c.execute(
                "SELECT s.owner, s.id, s.title, s.kind, s.created, s.updated, COUNT(t.idx), "
                "(SELECT question FROM session_turns f "
                " WHERE f.owner = s.owner AND f.session_id = s.id AND f.idx = 0) "
                "FROM sessions s JOIN session_turns t ON t.owner = s.owner AND t.session_id = s.id "
                "WHERE (? IS NULL OR s.owner = ?) "
                "GROUP BY s.owner, s.id ORDER BY s.updated DESC, s.owner, s.id LIMIT ? OFFSET ?",
                (*who, limit, offset),
            ).fetchall()
            total = c.execute(
                "SELECT COUNT(*) FROM (SELECT DISTINCT owner, session_id FROM session_turns "
                "WHERE (? IS NULL OR owner = ?))",
                who,
            ).fetchone()
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
            return items, int(total[0])

        return await self._db.run(read)
