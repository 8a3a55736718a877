"""Research-event throughput and resume latency: SQLite beside PostgreSQL (+ Redis) in one run.

Real servers started here (tests/datastores.py: Debian's PostgreSQL 15 and redis-server on
127.0.0.1, fsync off as in the tests, so the numbers compare engines and protocols, not disks):

- **save throughput**: one run's events saved as a run saves them (the row plus a batch of 10
  events per transaction), 2,000 events; then 4 runs saving at once (PostgreSQL serves several
  processes; SQLite has one writer);
- **resume**: ``events_after(run, 1000, 500)``, the page a reconnecting client's replica reads;
- **live delivery across processes**: the save, then from its commit until a follower on another
  connection has the event: PostgreSQL NOTIFY + ``events_after`` (what Quarry uses) beside Redis
  Streams (``XADD`` → a blocked ``XREAD``, the alternative the issue names, which would come on
  top of the same save). SQLite has no cross-process delivery: its follower is in the same
  process and wakes on an asyncio event once the save returns.

The box is shared (2 cores, other jobs): run it twice and read the two runs side by side.

Run: ``.venv/bin/python bench/scale/bench_events.py`` (``make bench``), about a minute.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from orchestrator.adapters.store.notify import Notifier  # noqa: E402
from orchestrator.adapters.store.pg import PgStore  # noqa: E402
from orchestrator.adapters.store.sqlite import SqliteStore  # noqa: E402
from orchestrator.core.store import EVENTS_CHANNEL, ResearchStore, RunRecord, StoredEvent  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from tests.datastores import postgres_server, redis_server  # noqa: E402

EVENTS = 2000
BATCH = 10
DATA = {"dimension": "d1", "iteration": 2, "query": "tidal bulge moon gravity", "n": 0}
PROBES = 200


def _run(run_id: str) -> RunRecord:
    now = time.time()
    return RunRecord(
        run_id, "q", "deep-research", "running", None, None, {"s": "x" * 2000}, now, now
    )


async def _fill(store: ResearchStore, run_id: str) -> float:
    await store.create_run(_run(run_id))
    start = time.perf_counter()
    for first in range(0, EVENTS, BATCH):
        batch = [
            StoredEvent(s, "search.started", {**DATA, "n": s}) for s in range(first, first + BATCH)
        ]
        await store.save(_run(run_id), batch)
    return EVENTS / (time.perf_counter() - start)


async def _concurrent(store: ResearchStore, tag: str) -> float:
    start = time.perf_counter()
    await asyncio.gather(*(_fill(store, f"{tag}{i:031d}") for i in range(4)))
    return 4 * EVENTS / (time.perf_counter() - start)


async def _resume_ms(store: ResearchStore, run_id: str) -> float:
    times = []
    for _ in range(30):
        start = time.perf_counter()
        page = await store.events_after(run_id, 1000, 500)
        times.append((time.perf_counter() - start) * 1000)
        assert len(page) == 500
    return statistics.median(times)


async def _pg_delivery(store: PgStore, url: str) -> tuple[list[float], list[float]]:
    """Per probe: the save (row + event + NOTIFY, committed) and then, from its commit, the
    time until a follower on another connection woke and read the event."""
    notifier = Notifier(url, (EVENTS_CHANNEL,))
    await notifier.start()
    run_id = "f" * 32
    await store.create_run(_run(run_id))
    saves, after = [], []
    try:
        for seq in range(PROBES):
            token = notifier.token(EVENTS_CHANNEL, run_id)
            start = time.perf_counter()
            await store.save(_run(run_id), [StoredEvent(seq, "x", DATA)])
            committed = time.perf_counter()
            await notifier.wait(EVENTS_CHANNEL, run_id, token, 5)
            got = await store.events_after(run_id, seq - 1, 10)
            after.append((time.perf_counter() - committed) * 1000)
            saves.append((committed - start) * 1000)
            assert got[0].seq == seq
    finally:
        await notifier.aclose()
    return saves, after


async def _xread(reader: Redis, last: str) -> Any:
    return await reader.xread({"run:f": last}, count=10, block=5000)


async def _redis_delivery(url: str) -> list[float]:
    writer, reader = Redis.from_url(url), Redis.from_url(url)
    out = []
    last = "0-0"
    try:
        for seq in range(PROBES):
            read = asyncio.create_task(_xread(reader, last))
            await asyncio.sleep(0)  # let the read block first, as a follower would be
            start = time.perf_counter()
            await writer.xadd("run:f", {"seq": seq, "data": str(DATA)})
            got = await read
            out.append((time.perf_counter() - start) * 1000)
            last = got[0][1][-1][0]
    finally:
        await writer.aclose()
        await reader.aclose()
    return out


def _p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as pg, redis_server() as rd:
        url = pg.new_database()
        lite: ResearchStore = await SqliteStore.open(tmp)
        pgs = await PgStore.open(url, max_size=8)
        try:
            rows = []
            for name, store in (("SQLite (file, WAL)", lite), ("PostgreSQL 15 (pool)", pgs)):
                one = await _fill(store, "a" * 32)
                four = await _concurrent(store, "c")
                resume = await _resume_ms(store, "a" * 32)
                rows.append((name, one, four, resume))
            save_ms, pg_ms = await _pg_delivery(pgs, url)
            redis_ms = await _redis_delivery(rd.url)
        finally:
            await lite.close()
            await pgs.close()
    print(f"events saved in batches of {BATCH} (row + events per transaction), {EVENTS} per run")
    print(f"{'engine':24} {'1 run ev/s':>11} {'4 runs ev/s':>12} {'resume 500 ms':>14}")
    for name, one, four, resume in rows:
        print(f"{name:24} {one:11.0f} {four:12.0f} {resume:14.2f}")
    print(f"\nlive delivery to a follower on another connection ({PROBES} probes, one event each)")
    print("  the event is saved in PostgreSQL either way (replay, takeover, the report), then:")
    lines = (
        ("PostgreSQL save (row+event+NOTIFY)", save_ms),
        ("then NOTIFY -> woken -> events_after", pg_ms),
        ("or else Redis Streams XADD -> XREAD", redis_ms),
    )
    for name, ms in lines:
        print(f"  {name:38} p50 {_p(ms, 0.5):6.2f} ms  p95 {_p(ms, 0.95):6.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
