"""Numbered schema migrations (``migrations/NNNN_name.sql``) and the ``schema_version`` table."""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from importlib import resources

_NAME_RE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

SCHEMA_VERSION_DDL = """
CREATE TABLE IF NOT EXISTS schema_version (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


class MigrationError(Exception):
    """The migrations are inconsistent (a duplicate number) or the database is newer."""


@dataclass(frozen=True)
class Migration:
    """One schema step."""

    version: int
    name: str
    sql: str


def load_migrations(package: str = "orchestrator.adapters.store.migrations") -> list[Migration]:
    """Every ``NNNN_name.sql`` in ``package``, in version order.

    Raises:
        MigrationError: two files share a number.
    """
    found: dict[int, Migration] = {}
    for entry in resources.files(package).iterdir():
        match = _NAME_RE.match(entry.name)
        if not match:
            continue
        version = int(match.group(1))
        if version in found:
            raise MigrationError(
                f"migrations {found[version].name} and {match.group(2)} share number {version}"
            )
        found[version] = Migration(version, match.group(2), entry.read_text("utf-8"))
    return [found[v] for v in sorted(found)]


def migrate(conn: sqlite3.Connection, migrations: list[Migration]) -> list[int]:
    """Apply the migrations ``conn`` has not seen, each in its own transaction; their versions.

    Raises:
        MigrationError: the database holds a version this code does not know (a newer build
            wrote it; running on would risk the data).
    """
    conn.execute(SCHEMA_VERSION_DDL)
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_version")}
    known = {m.version for m in migrations}
    unknown = sorted(applied - known)
    if unknown:
        raise MigrationError(
            f"the database has schema versions this build does not know: {unknown}"
        )
    done = []
    for m in migrations:
        if m.version in applied:
            continue
        # executescript commits any open transaction first, then runs the script as given: the
        # script opens the transaction that the version row then joins.
        try:
            conn.executescript(f"BEGIN;\n{m.sql}\n;")
            conn.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)", (m.version, m.name, time.time())
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        done.append(m.version)
    return done
