"""The numbered migrations on PostgreSQL: ``migrations_pg/NNNN_name.sql``, the twins of the SQLite
files (same numbers and names), recorded in the same ``schema_version`` table.

Several orchestrators and workers may start at once: a session-level advisory lock lets one of
them migrate while the others wait, then find nothing left to do.
"""

from __future__ import annotations

import time

import psycopg

from orchestrator.adapters.store.migrate import (
    SCHEMA_VERSION_DDL,
    Migration,
    MigrationError,
    load_migrations,
)

PG_PACKAGE = "orchestrator.adapters.store.migrations_pg"
# Any constant shared by every Quarry process ("quarry" in ASCII): the advisory lock's key.
_LOCK_KEY = 0x717561727279


def pg_migrations() -> list[Migration]:
    """The PostgreSQL migrations, in version order.

    Raises:
        MigrationError: they do not pair one to one with the SQLite migrations.
    """
    pg, lite = load_migrations(PG_PACKAGE), load_migrations()
    if [(m.version, m.name) for m in pg] != [(m.version, m.name) for m in lite]:
        raise MigrationError("the PostgreSQL and SQLite migrations differ in numbers or names")
    return pg


async def migrate_pg(conn: psycopg.AsyncConnection[object]) -> list[int]:
    """Apply the migrations the database has not seen, each in its own transaction.

    ``conn`` must be in autocommit mode. Raises MigrationError for a database this build does
    not know (a newer build migrated it).
    """
    migrations = pg_migrations()
    await conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        await conn.execute(SCHEMA_VERSION_DDL.replace("REAL", "DOUBLE PRECISION"))
        cur = await conn.execute("SELECT version FROM schema_version")
        applied = {int(row[0]) for row in await cur.fetchall()}  # type: ignore[index]
        unknown = sorted(applied - {m.version for m in migrations})
        if unknown:
            raise MigrationError(
                f"the database has schema versions this build does not know: {unknown}"
            )
        done = []
        for m in migrations:
            if m.version in applied:
                continue
            async with conn.transaction():
                await conn.execute(m.sql.encode())
                await conn.execute(
                    "INSERT INTO schema_version VALUES (%s, %s, %s)",
                    (m.version, m.name, time.time()),
                )
            done.append(m.version)
        return done
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
