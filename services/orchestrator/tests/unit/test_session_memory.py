"""What each question leaves behind in memory: its session, whose turn keeps the answer, the
sources and the passages the model saw (up to ORCHESTRATOR_SESSION_MAX_CHARS). The store kept
the 1,000 most recent sessions whatever their size, so a soak of long answers grew by tens of
KB a question; it now also holds at most ORCHESTRATOR_SESSION_CACHE_CHARS of turns."""

from __future__ import annotations

import time
from pathlib import Path

from orchestrator.adapters.store.session_db import SqliteSessionDB
from orchestrator.config import Settings
from orchestrator.core.principals import LOCAL_ID as ME
from orchestrator.core.sessions import SessionStore, Turn
from orchestrator.wiring.runtime import session_store

PASSAGE = "The Moon's gravity raises two tidal bulges. " * 1000  # 44,000 characters


def turn(question: str) -> Turn:
    sources = ({"n": 1, "url": "https://example.org/tides", "passages": [PASSAGE]},)
    return Turn(question, "Tides come from the Moon [1].", sources, "answered", time.time())


def in_memory_chars(store: SessionStore, ids: list[str]) -> int:
    """Characters of the turns of the sessions the store holds in memory (public API only)."""
    return sum(t.size for sid in ids if (s := store.cached(ME, sid)) for t in s.turns)


async def test_the_production_store_holds_a_bounded_size_after_many_questions() -> None:
    settings = Settings()
    store = session_store(settings)
    ids = [f"s{i}" for i in range(settings.max_sessions)]  # one new session per question
    for sid in ids:
        async with store.use(ME, sid) as session:
            await store.add_turn(session, turn(f"question {sid}"))
    held = in_memory_chars(store, ids)
    # 1,000 sessions of 44,000 characters each were all kept: 44 million characters.
    assert held <= 20_000_000
    assert held <= settings.session_cache_chars
    assert store.cached(ME, ids[-1]) is not None  # the newest stay


async def test_a_session_evicted_for_size_comes_back_from_the_database(tmp_path: Path) -> None:
    db = await SqliteSessionDB.open(str(tmp_path))
    try:
        store = SessionStore(
            ttl_s=600, max_chars=60_000, max_sessions=1000, db=db, max_total_chars=100_000
        )
        for sid in ("a", "b", "c"):
            async with store.use(ME, sid) as session:
                await store.add_turn(session, turn(f"about {sid}"))
        assert store.cached(ME, "a") is None  # over 100,000 characters: the oldest went
        back = await store.get(ME, "a")
        assert back is not None
        assert [t.question for t in back.turns] == ["about a"]
    finally:
        await db.close()


async def test_a_session_in_use_is_never_evicted_for_size() -> None:
    store = SessionStore(ttl_s=600, max_chars=60_000, max_sessions=1000, max_total_chars=100_000)
    async with store.use(ME, "busy") as busy:
        await store.add_turn(busy, turn("first"))
        for sid in ("x", "y", "z"):
            async with store.use(ME, sid) as session:
                await store.add_turn(session, turn(sid))
        assert store.cached(ME, "busy") is busy
