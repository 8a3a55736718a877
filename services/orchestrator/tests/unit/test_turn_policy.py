"""A quick-search turn keeps what the source policy dropped: in memory, in the API's view and in
SQLite across a restart (migration 0005); a turn from before the migration has none."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from orchestrator.adapters.store.session_db import SqliteSessionDB
from orchestrator.adapters.store.sqlite import DB_FILE
from orchestrator.api.http.models import SessionView
from orchestrator.core.sessions import Session, Turn

POLICY = {
    "rules": {"allow": [], "deny": [{"domain": "evil.test", "scope": "request"}]},
    "dropped": [
        {
            "url": "http://evil.test/x",
            "host": "evil.test",
            "stage": "result",
            "rule": "deny evil.test (request)",
        }
    ],
}


async def test_the_policy_survives_a_restart(tmp_path: Path) -> None:
    db = await SqliteSessionDB.open(str(tmp_path))
    try:
        with_policy = Turn("q1 -site:evil.test", "a1", (), "answered", 1.0, policy=POLICY)
        without = Turn("q2", "a2", (), "answered", 2.0)
        await db.save(Session("s", 1.0, 0.0, [with_policy, without]))
    finally:
        await db.close()
    db = await SqliteSessionDB.open(str(tmp_path))
    try:
        loaded = await db.load("local", "s")
    finally:
        await db.close()
    assert loaded is not None
    assert [t.policy for t in loaded.turns] == [POLICY, {}]
    shown = loaded.to_json()["turns"]
    assert shown[0]["policy"] == POLICY
    assert "policy" not in shown[1]
    view = SessionView.model_validate(loaded.to_json()).model_dump()
    assert view["turns"][0]["policy"] == POLICY
    assert view["turns"][1]["policy"] is None
    # the dropped entries count against the session's size budget
    assert with_policy.size > Turn("q1 -site:evil.test", "a1", (), "answered", 1.0).size


async def test_turns_stored_before_the_migration_have_no_policy(tmp_path: Path) -> None:
    await (await SqliteSessionDB.open(str(tmp_path))).close()
    conn = sqlite3.connect(tmp_path / DB_FILE)
    try:
        with conn:  # a row as an older build wrote it: no policy column given
            conn.execute("INSERT INTO sessions VALUES ('local', 'old', '', 'chat', 1.0, 1.0)")
            conn.execute(
                "INSERT INTO session_turns (owner, session_id, idx, question, answer, sources, "
                "status, at) VALUES ('local', 'old', 0, 'q', 'a', '[]', 'answered', 1.0)"
            )
    finally:
        conn.close()
    db = await SqliteSessionDB.open(str(tmp_path))
    try:
        loaded = await db.load("local", "old")
    finally:
        await db.close()
    assert loaded is not None
    assert loaded.turns[0].policy == {}
