"""The embedded database: numbered migrations, the schema_version table, and the store's
operations on a real SQLite file."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from orchestrator.adapters.store.migrate import MigrationError, load_migrations, migrate
from orchestrator.adapters.store.sqlite import DB_FILE, SqliteStore
from orchestrator.core.store import RunRecord, StoredEvent

pytestmark = pytest.mark.asyncio


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> str:
    pkg = tmp_path / "fake_migrations"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, sql in files.items():
        (pkg / name).write_text(sql)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("fake_migrations", None)
    return "fake_migrations"


def _record(run_id: str, created: float, status: str = "running") -> RunRecord:
    return RunRecord(run_id, "q", "deep-research", status, None, None, {"a": 1}, created, created)


async def test_migrations_apply_in_order_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = _package(
        tmp_path,
        monkeypatch,
        {
            "0002_more.sql": "ALTER TABLE t ADD COLUMN b TEXT;",
            "0001_first.sql": "CREATE TABLE t (a TEXT);",
            "README.txt": "not a migration",
        },
    )
    migrations = load_migrations(pkg)
    assert [(m.version, m.name) for m in migrations] == [(1, "first"), (2, "more")]
    conn = sqlite3.connect(":memory:", isolation_level=None)
    assert migrate(conn, migrations) == [1, 2]
    assert migrate(conn, migrations) == []
    assert [r[0] for r in conn.execute("SELECT version FROM schema_version")] == [1, 2]
    conn.execute("INSERT INTO t (a, b) VALUES ('x', 'y')")


async def test_a_failing_migration_leaves_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = _package(
        tmp_path, monkeypatch, {"0001_bad.sql": "CREATE TABLE t (a TEXT); SELECT * FROM nope;"}
    )
    conn = sqlite3.connect(":memory:", isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, load_migrations(pkg))
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name='t'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 0


async def test_duplicate_numbers_and_unknown_versions_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = _package(tmp_path, monkeypatch, {"0001_a.sql": "", "0001_b.sql": ""})
    with pytest.raises(MigrationError, match="share number 1"):
        load_migrations(pkg)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrate(conn, load_migrations())
    conn.execute("INSERT INTO schema_version VALUES (999, 'future', 0)")
    with pytest.raises(MigrationError, match="999"):
        migrate(conn, load_migrations())


async def test_store_round_trip_on_a_file(tmp_path: Path) -> None:
    store = await SqliteStore.open(str(tmp_path / "data"))
    try:
        await store.create_run(_record("old", 1.0))
        await store.create_run(_record("new", 2.0))
        events = [StoredEvent(0, "state", {"status": "running"}), StoredEvent(1, "x", {"n": 1})]
        await store.save(_record("old", 1.0), events)
        await store.save(_record("old", 1.0), events[1:])  # saved again: kept once
        assert await store.events_after("old", -1, 10) == events
        assert await store.events_after("old", 0, 10) == events[1:]
        got = await store.get_run("old")
        assert got is not None
        assert got.last_seq == 1
        assert got.state == {"a": 1}
        runs, total = await store.list_runs(10, 0)
        assert [r.id for r in runs] == ["new", "old"]
        assert total == 2
        assert sorted(r.id for r in await store.runs_with_status("running")) == ["new", "old"]
        done = RunRecord("old", "q", "m", "completed", None, None, {}, 1.0, 5.0, finished_at=5.0)
        await store.save(done, [])
        assert await store.expire(4.0) == 0
        assert await store.expire(6.0) == 1
        assert await store.get_run("old") is None
        assert await store.events_after("old", -1, 10) == []
    finally:
        await store.close()
    assert (tmp_path / "data" / DB_FILE).exists()
    reopened = await SqliteStore.open(str(tmp_path / "data"))
    try:
        assert await reopened.get_run("new") is not None
    finally:
        await reopened.close()


async def test_one_row_mapping_for_every_database() -> None:
    # SQLite's rows end at owner, PostgreSQL's carry lease_owner after it: one constructor reads
    # both (adapters/store/sqlite.py and pg.py), and as_row is its inverse.
    run = RunRecord(
        "r1", "q", "deep-research", "done", "report", "s1", {"plan": ["a"]}, 1.0, 2.0, 3.0, 7, "ann"
    )
    assert RunRecord.from_row(run.as_row()) == run
    held = RunRecord.from_row((*run.as_row(), "worker-2"))
    assert held.lease_owner == "worker-2"
    assert held.state == {"plan": ["a"]}
