"""Move an SQLite install to PostgreSQL: every research run, event, session, turn and schedule.

    python -m orchestrator.adapters.store.move --from /var/lib/quarry --to postgresql://u:p@db/quarry

Stop the orchestrator first (the SQLite file must not change meanwhile). The SQLite file is
migrated to this build's schema, the PostgreSQL database likewise, then the five tables are
copied with COPY in ONE transaction: either everything arrives or nothing does, so a failed move
can simply be run again. A database that already holds runs or sessions is refused, never
merged into. Runs the SQLite install left ``running`` (it crashed) arrive ``interrupted``, as
the SQLite orchestrator itself would have marked them at its next start; ``queued`` ones stay
queued for the workers. The SQLite file is only read, never changed beyond its migrations.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psycopg import AsyncConnection, sql

from orchestrator.adapters.store.pg_migrate import migrate_pg
from orchestrator.adapters.store.sqlite_db import DB_FILE, connect

# Parents before children (the foreign keys).
TABLES = ("research_runs", "research_events", "sessions", "session_turns", "schedules")
_BATCH = 1000


class MoveError(Exception):
    """The move cannot start (no SQLite file, a non-empty target)."""


@dataclass(frozen=True)
class Moved:
    """Rows copied per table."""

    rows: dict[str, int]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _open_sqlite(data_dir: str) -> sqlite3.Connection:
    path = Path(data_dir) / DB_FILE
    if not path.is_file():
        raise MoveError(f"no SQLite database at {path}")
    return connect(path)


def _fixed(table: str, cols: Sequence[str], row: tuple[Any, ...]) -> tuple[Any, ...]:
    if table == "research_runs" and row[cols.index("status")] == "running":
        out = list(row)
        out[cols.index("status")] = "interrupted"
        out[cols.index("lease_owner")] = None
        return tuple(out)
    return row


async def move(data_dir: str, url: str) -> Moved:
    """Copy the SQLite install in ``data_dir`` into the PostgreSQL database at ``url``.

    Raises:
        MoveError: no SQLite file, or the target already holds runs or sessions.
        MigrationError: either database is newer than this build.
        psycopg.Error: the PostgreSQL server failed or refused (nothing was copied).
    """
    lite = await asyncio.to_thread(_open_sqlite, data_dir)
    try:
        async with await AsyncConnection.connect(url, autocommit=True) as pg:
            await migrate_pg(pg)
            counts: dict[str, int] = {}
            async with pg.transaction():
                for table in ("research_runs", "sessions"):
                    ident = sql.Identifier(table)
                    cur = await pg.execute(sql.SQL("SELECT count(*) FROM {}").format(ident))
                    row = await cur.fetchone()
                    if row and row[0]:
                        raise MoveError(f"the PostgreSQL database already holds {table}")
                for table in TABLES:
                    counts[table] = await _copy(lite, pg, table)
            return Moved(counts)
    finally:
        lite.close()


async def _copy(lite: sqlite3.Connection, pg: AsyncConnection[Any], table: str) -> int:
    cols = _columns(lite, table)
    names = sql.SQL(", ").join(map(sql.Identifier, cols))
    # Built from the schema's own column names (constants): no caller text reaches the SQL.
    cur = lite.execute(f"SELECT {', '.join(cols)} FROM {table}")  # noqa: S608
    copied = 0
    stmt = sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), names)
    async with pg.cursor() as pcur, pcur.copy(stmt) as copy:
        while rows := await asyncio.to_thread(cur.fetchmany, _BATCH):
            for row in rows:
                await copy.write_row(_fixed(table, cols, row))
            copied += len(rows)
    return copied


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; 0 on success, 1 with a message on stderr otherwise."""
    parser = argparse.ArgumentParser(
        prog="python -m orchestrator.adapters.store.move",
        description="Copy an SQLite install (ORCHESTRATOR_DATA_DIR) into PostgreSQL.",
    )
    parser.add_argument("--from", dest="data_dir", required=True, help="ORCHESTRATOR_DATA_DIR")
    parser.add_argument("--to", dest="url", required=True, help="postgresql://… URL")
    args = parser.parse_args(argv)
    if not args.url.startswith(("postgresql://", "postgres://")):
        sys.stderr.write("move: --to must be a postgresql:// URL\n")
        return 1
    try:
        moved = asyncio.run(move(args.data_dir, args.url))
    except Exception as err:  # noqa: BLE001 - one line for the operator, nothing half-done
        sys.stderr.write(f"move: {type(err).__name__}: {err}\n")
        return 1
    for table, n in moved.rows.items():
        sys.stdout.write(f"{table}: {n} rows\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
