"""The schedules' store on a real PostgreSQL 15 and on SQLite, two "replicas" (two stores, two
connection pools) on one database: a due firing is claimed by exactly one of them, a finished
run is finished by exactly one, and the same operations give the same results on both engines.
No clock: every time is a number the test gives."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from orchestrator.adapters.store.move import move
from orchestrator.adapters.store.pg_schedules import PgScheduleDB
from orchestrator.adapters.store.schedules_db import ScheduleSQL, SqliteScheduleDB
from orchestrator.core.schedules.model import STARTING, Outcome, Schedule

pytestmark = pytest.mark.asyncio

NOW = 1_800_000_000.0


def schedule(owner: str = "alice", next_run_at: float = NOW - 60) -> Schedule:
    return Schedule(
        id=f"{owner:0<32}"[:32],
        owner=owner,
        name="tides",
        query="how do tides work",
        mode="deep-research",
        sources=["web"],
        cron="daily",
        timezone="Europe/Paris",
        paused=False,
        created_at=NOW - 86_400,
        updated_at=NOW - 86_400,
        next_run_at=next_run_at,
        webhook_url="https://hooks.example.com/q",
        webhook_secret="x" * 20,
    )


@asynccontextmanager
async def replicas(engine: str, where: str) -> AsyncIterator[tuple[ScheduleSQL, ScheduleSQL]]:
    a: ScheduleSQL
    b: ScheduleSQL
    if engine == "pg":
        a, b = await PgScheduleDB.open(where, 2), await PgScheduleDB.open(where, 2)
    else:
        a, b = await SqliteScheduleDB.open(where), await SqliteScheduleDB.open(where)
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


@pytest.fixture(params=["pg", "sqlite"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "pg":
        return "pg", str(request.getfixturevalue("pg_url"))
    return "sqlite", str(tmp_path)


async def test_one_replica_fires_a_due_run_and_one_finishes_it(database: tuple[str, str]) -> None:
    async with replicas(*database) as (a, b):
        s = schedule()
        await a.create(s)
        assert [x.id for x in await b.due(NOW)] == [s.id]
        following = NOW + 86_400
        won = await asyncio.gather(
            *(r.claim(s.id, s.next_run_at, following, NOW) for r in (a, b, a, b))
        )
        assert sorted(won) == [False, False, False, True]
        assert await a.due(NOW) == []  # moved to the next firing
        got = await b.get(s.id)
        assert got is not None
        assert (got.pending_run_id, got.next_run_at) == (STARTING, following)
        assert not await b.claim(s.id, None, following, NOW)  # run-now: a run is pending

        await a.started(s.id, "r" * 32, NOW)
        outcome = Outcome("r" * 32, "completed", NOW + 5, None, {"added_sources": []}, {"x": 1})
        finished = await asyncio.gather(a.finish(s.id, outcome), b.finish(s.id, outcome))
        assert sorted(finished) == [False, True]
        done = await a.get(s.id)
        assert done is not None
        assert (done.pending_run_id, done.last_run_id, done.runs) == (None, "r" * 32, 1)
        assert done.baseline == {"x": 1}
        assert done.webhook_secret == "x" * 20
        assert "x" * 20 not in repr(done)  # never in a log line


async def test_pages_owners_updates_and_deletes_alike_on_both_engines(
    database: tuple[str, str],
) -> None:
    async with replicas(*database) as (a, _):
        for owner in ("alice", "bob", "carol"):
            await a.create(schedule(owner))
        page, total = await a.list_page("bob", 10, 0)
        assert ([s.owner for s in page], total) == (["bob"], 1)
        assert (await a.list_page(None, 2, 0))[1] == 3
        assert await a.count("alice") == 1
        bob = page[0]
        paused = Schedule(**{**bob.__dict__, "paused": True, "name": "renamed"})
        assert await a.update(paused)
        assert sorted(s.owner for s in await a.due(NOW)) == ["alice", "carol"]
        assert await a.delete(bob.id)
        assert not await a.delete(bob.id)
        assert await a.get(bob.id) is None


async def test_moving_an_sqlite_install_to_postgresql_keeps_its_schedules(
    pg_url: str, tmp_path: Path
) -> None:
    lite = await SqliteScheduleDB.open(str(tmp_path))
    kept = dataclasses.replace(schedule("ann"), last_changes={"added_sources": []}, runs=3)
    await lite.create(kept)
    await lite.close()
    moved = await move(str(tmp_path), pg_url)
    assert moved.rows["schedules"] == 1
    pg = await PgScheduleDB.open(pg_url)
    try:
        assert await pg.get(kept.id) == kept
    finally:
        await pg.close()
