"""The stores on a real PostgreSQL 15 (started by the test, tests/datastores.py) beside SQLite:
the same numbered migrations give the same schema on both engines, the same operations the same
results, the queue hands each run to exactly one worker, the cluster-wide cap holds under
concurrent admissions, and `python -m orchestrator.adapters.store.move` moves an SQLite install."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from orchestrator.adapters.store.migrate import load_migrations, migrate
from orchestrator.adapters.store.pg import PgStore
from orchestrator.adapters.store.pg_migrate import pg_migrations
from orchestrator.adapters.store.pg_sessions import PgSessionDB
from orchestrator.adapters.store.select import SharedSessionStore
from orchestrator.adapters.store.session_db import SqliteSessionDB
from orchestrator.adapters.store.sqlite import SqliteStore
from orchestrator.core.sessions import Session, Turn
from orchestrator.core.store import LeaseLost, ResearchStore, RunRecord, StoredEvent

from tests.conftest import ROOT

_TYPES = {"double precision": "REAL", "real": "REAL", "text": "TEXT", "integer": "INTEGER"}


def _sqlite_schema() -> dict[str, Any]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrate(conn, load_migrations())
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    schema: dict[str, Any] = {}
    for t in tables:
        cols = conn.execute(f"PRAGMA table_info({t})").fetchall()
        schema[t] = {
            "columns": {c[1]: (c[2].upper(), bool(c[3]) or c[5] > 0) for c in cols},
            "key": [c[1] for c in sorted(cols, key=lambda c: c[5]) if c[5] > 0],
        }
    indexes = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"
    ).fetchall()
    schema["indexes"] = sorted(r[0] for r in indexes)
    return schema


def _pg_schema(url: str) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema='public'"
        ).fetchall()
        for (t,) in tables:
            cols = conn.execute(
                "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                "WHERE table_name=%s ORDER BY ordinal_position",
                (t,),
            ).fetchall()
            key = conn.execute(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
                " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary"
                " ORDER BY array_position(i.indkey, a.attnum)",
                (t,),
            ).fetchall()
            keys = [k[0] for k in key]
            schema[t] = {
                "columns": {c: (_TYPES[d], n == "NO") for c, d, n in cols},
                "key": keys,
            }
        idx = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname='public' AND indexname NOT LIKE "
            "'%pkey'"
        ).fetchall()
        schema["indexes"] = sorted(r[0] for r in idx)
    return schema


async def test_the_numbered_migrations_build_the_same_schema_on_both_engines(pg_url: str) -> None:
    store = await PgStore.open(pg_url)
    await store.close()
    lite, pg = _sqlite_schema(), _pg_schema(pg_url)
    assert [m.name for m in pg_migrations()] == [m.name for m in load_migrations()]
    assert sorted(lite) == sorted(pg)
    for table in lite:
        assert lite[table] == pg[table], table


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ResearchStore]:
    if request.param == "sqlite":
        opened: ResearchStore = await SqliteStore.open(str(tmp_path))
    else:
        opened = await PgStore.open(request.getfixturevalue("pg_url"))
    yield opened
    await opened.close()


async def _cli(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        subprocess.run, cmd, capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )


def _run(run_id: str, owner: str = "ann", status: str = "running", at: float = 0.0) -> RunRecord:
    now = at or time.time()
    return RunRecord(
        run_id, "q?", "deep-research", status, None, None, {"n": 1}, now, now, owner=owner
    )


async def test_both_engines_give_the_same_answers(store: ResearchStore) -> None:
    await store.create_run(_run("a" * 32, "ann", at=100.0))
    await store.create_run(_run("b" * 32, "bob", at=200.0))
    first = [StoredEvent(0, "state", {"status": "running"}), StoredEvent(1, "x", {"é": [1]})]
    await store.save(dataclasses.replace(_run("a" * 32, at=100.0), phase="scope"), first)
    # A batch saved again after a failed flush keeps the first copy; nothing is duplicated.
    await store.save(_run("a" * 32, at=100.0), [*first[1:], StoredEvent(2, "y", {})])
    assert [e.seq for e in await store.events_after("a" * 32, -1, 10)] == [0, 1, 2]
    assert (await store.events_after("a" * 32, 0, 1))[0].data == {"é": [1]}
    got = await store.get_run("a" * 32)
    assert got is not None
    assert got.last_seq == 2
    assert got.state == {"n": 1}
    runs, total = await store.list_runs(10, 0, "bob")
    assert ([r.id for r in runs], total) == (["b" * 32], 1)
    runs, total = await store.list_runs(10, 0, None)
    assert ([r.id for r in runs], total) == (["b" * 32, "a" * 32], 2)
    assert sorted(r.id for r in await store.runs_with_status("running")) == ["a" * 32, "b" * 32]
    done = dataclasses.replace(
        _run("b" * 32, "bob", at=200.0), status="completed", finished_at=300.0
    )
    await store.save(done, [])
    assert await store.expire(400.0) == 1
    assert await store.get_run("b" * 32) is None


async def test_a_run_is_claimed_by_exactly_one_worker(pg_url: str) -> None:
    store = await PgStore.open(pg_url, max_size=20)
    try:
        for i in range(3):
            await store.create_run(_run(f"{i:032d}", status="queued", at=100.0 + i))
        claims = await asyncio.gather(*(store.claim(f"w{i}", 30.0) for i in range(12)))
        won = [c for c in claims if c is not None]
        assert sorted(c.id for c in won) == [f"{i:032d}" for i in range(3)]
        assert len({c.lease_owner for c in won}) == 3
        # Its lease holds: nobody else claims it, and another worker's save is refused.
        assert await store.claim("late", 30.0) is None
        run = won[0]
        with pytest.raises(LeaseLost):
            await store.save(dataclasses.replace(run, lease_owner="late"), [])
        with pytest.raises(LeaseLost):
            await store.renew(run.id, "late", 30.0)
        assert await store.request(run.id, "cancel")
        assert await store.renew(run.id, run.lease_owner or "", 30.0) == "cancel"
        assert await store.renew(run.id, run.lease_owner or "", 30.0) is None  # taken once
    finally:
        await store.close()


async def test_an_expired_lease_passes_the_run_to_another_worker(pg_url: str) -> None:
    store = await PgStore.open(pg_url)
    try:
        await store.create_run(_run("c" * 32, status="queued"))
        mine = await store.claim("dead", 0.001)
        assert mine is not None
        await asyncio.sleep(0.01)
        theirs = await store.claim("alive", 30.0)
        assert theirs is not None
        assert theirs.id == mine.id
        assert theirs.lease_owner == "alive"
        with pytest.raises(LeaseLost):  # the presumed-dead worker comes back: refused
            await store.save(mine, [StoredEvent(0, "state", {})])
        assert await store.events_after(mine.id, -1, 10) == []
    finally:
        await store.close()


async def test_the_cluster_cap_holds_under_concurrent_admissions(pg_url: str) -> None:
    stores = [await PgStore.open(pg_url, max_size=5) for _ in range(2)]  # two "replicas"
    try:
        admitted = await asyncio.gather(
            *(stores[i % 2].admit(_run(f"{i:032d}", status="queued"), 3) for i in range(10))
        )
        assert admitted.count(True) == 3
        assert await stores[0].in_flight() == 3
    finally:
        for s in stores:
            await s.close()


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
async def test_sessions_behave_the_same_on_both_engines(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if engine == "sqlite":
        db: Any = await SqliteSessionDB.open(str(tmp_path))
    else:
        db = await PgSessionDB.open(request.getfixturevalue("pg_url"))
    try:
        turn = Turn(
            "why?", "because [1]", ({"n": 1, "url": "https://a.example/"},), "answered", 5.0
        )
        for owner in ("ann", "bob"):
            await db.save(Session("work", 1.0, 0.0, [turn, turn], title="", owner=owner))
        loaded = await db.load("bob", "work")
        assert loaded is not None
        assert len(loaded.turns) == 2
        assert loaded.turns[0] == turn
        items, total = await db.page("ann", 0, 10)
        assert (total, items[0]["title"], items[0]["turns"]) == (1, "why?", 2)
        assert (await db.page(None, 0, 10))[1] == 2
        assert await db.delete("ann", "work")
        assert not await db.delete("ann", "work")
        assert await db.load("ann", "work") is None
        assert await db.load("bob", "work") is not None
    finally:
        await db.close()


async def test_the_move_command_copies_an_sqlite_install_and_refuses_to_merge(
    pg_url: str, tmp_path: Path
) -> None:
    lite = await SqliteStore.open(str(tmp_path))
    await lite.create_run(_run("d" * 32, "ann", at=10.0))  # left running by a crash
    await lite.save(
        _run("d" * 32, "ann", at=10.0), [StoredEvent(i, "e", {"i": i}) for i in range(3)]
    )
    done = dataclasses.replace(_run("e" * 32, "bob", at=20.0), status="completed", finished_at=30.0)
    await lite.create_run(done)
    await lite.close()
    sessions = await SqliteSessionDB.open(str(tmp_path))
    turn = Turn("q", "a", (), "answered", 1.0)
    await sessions.save(Session("s1", 1.0, 0.0, [turn], title="t", owner="ann"))
    await sessions.close()

    cmd = [
        sys.executable,
        "-m",
        "orchestrator.adapters.store.move",
        "--from",
        str(tmp_path),
        "--to",
        pg_url,
    ]
    out = await _cli(cmd)
    assert out.returncode == 0, out.stderr
    assert "research_events: 3 rows" in out.stdout

    pg = await PgStore.open(pg_url)
    try:
        moved = await pg.get_run("d" * 32)
        assert moved is not None
        assert moved.status == "interrupted"
        assert moved.owner == "ann"
        assert [e.data for e in await pg.events_after("d" * 32, -1, 10)] == [
            {"i": i} for i in range(3)
        ]
        finished = await pg.get_run("e" * 32)
        assert finished is not None
        assert finished.status == "completed"
    finally:
        await pg.close()
    db = await PgSessionDB.open(pg_url)
    try:
        session = await db.load("ann", "s1")
        assert session is not None
        assert session.title == "t"
        assert session.turns == [turn]
    finally:
        await db.close()

    again = await _cli(cmd)
    assert again.returncode == 1
    assert "already holds research_runs" in again.stderr
    missing = [*cmd[:4], str(tmp_path / "nowhere"), *cmd[5:]]
    gone = await _cli(missing)
    assert gone.returncode == 1
    assert "no SQLite database" in gone.stderr


async def test_two_replicas_sessions_keep_every_turn(pg_url: str) -> None:
    dbs = [await PgSessionDB.open(pg_url), await PgSessionDB.open(pg_url)]
    replicas = [
        SharedSessionStore(ttl_s=1800.0, max_chars=100_000, max_sessions=100, db=db) for db in dbs
    ]
    try:
        for i, store in enumerate([*replicas, *replicas]):  # A, B, A, B
            async with store.use("ann", "notes") as session:
                await store.add_turn(session, Turn(f"q{i}", "a", (), "answered", float(i)))
        loaded = await dbs[0].load("ann", "notes")
        assert loaded is not None
        assert [t.question for t in loaded.turns] == ["q0", "q1", "q2", "q3"]
    finally:
        for db in dbs:
            await db.close()
