"""Sessions in SQLite (a real database file): migrations once, save / load / page / delete."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from orchestrator.adapters.store.migrate import load_migrations, migrate
from orchestrator.adapters.store.session_db import SqliteSessionDB
from orchestrator.adapters.store.sqlite import DB_FILE, SqliteStore
from orchestrator.core.sessions import Session, SessionStore, Turn


def turn(q: str, at: float) -> Turn:
    return Turn(q, f"answer to {q}", ({"n": 1, "url": "https://a.test/"},), "answered", at)


async def test_round_trip_newest_first_and_delete(tmp_path: Path) -> None:
    db = await SqliteSessionDB.open(str(tmp_path))
    try:
        await db.save(Session("a", 1.0, 0.0, [turn("qa", 10.0)]))
        await db.save(Session("b", 2.0, 0.0, [turn("qb", 20.0), turn("qb2", 21.0)], title="B"))
        await db.save(Session("empty", 3.0, 0.0, []))  # no turns: not listed
        loaded = await db.load("local", "b")
        assert loaded is not None
        assert [t.question for t in loaded.turns] == ["qb", "qb2"]
        assert loaded.turns[0].sources == ({"n": 1, "url": "https://a.test/"},)
        items, total = await db.page("local", 0, 10)
        assert [(i["session_id"], i["title"], i["turns"]) for i in items] == [
            ("b", "B", 2),
            ("a", "qa", 1),
        ]
        assert total == 2
        assert await db.delete("local", "b")
        assert not await db.delete("local", "b")
        assert await db.load("local", "b") is None
    finally:
        await db.close()


async def test_sessions_share_the_research_database_and_its_migrations(tmp_path: Path) -> None:
    await (await SqliteSessionDB.open(str(tmp_path))).close()  # creates and migrates
    research = await SqliteStore.open(str(tmp_path))  # the same file: nothing left to apply
    await research.close()
    conn = sqlite3.connect(tmp_path / DB_FILE)
    try:
        assert migrate(conn, load_migrations()) == []
        names = {row[0] for row in conn.execute("SELECT name FROM schema_version")}
        assert {"research", "sessions"} <= names
    finally:
        conn.close()


async def test_store_loads_from_the_database_after_a_restart(tmp_path: Path) -> None:
    db = await SqliteSessionDB.open(str(tmp_path))
    store = SessionStore(ttl_s=60, max_chars=10_000, max_sessions=10, db=db)
    async with store.use("local", "s") as session:
        await store.add_turn(session, turn("q1", 1.0))
    await db.close()
    db = await SqliteSessionDB.open(str(tmp_path))
    fresh = SessionStore(ttl_s=60, max_chars=10_000, max_sessions=10, db=db)
    try:
        loaded = await fresh.get("local", "s")
        assert loaded is not None
        assert [t.question for t in loaded.turns] == ["q1"]
        assert fresh.persistent
    finally:
        await db.close()


def test_one_turn_row_mapping_for_every_database() -> None:
    # Both session databases (SQLite, PostgreSQL) read and write turns through these two.
    policy = {"dropped": [{"url": "https://b.test/", "rule": "deny"}]}
    original = Turn("q", "a", ({"n": 1, "url": "https://a.test/"},), "answered", 5.0, policy)
    row = original.as_row()
    # sources and policy are JSON text in the database
    assert isinstance(row[2], str)
    assert isinstance(row[5], str)
    back = Turn.from_row(row)
    assert back == original
    assert back.policy == policy  # policy is left out of ==, so check it apart
