"""Question throughput with 1 vs 2 orchestrator replicas and 1 vs 2 reader processes.

Real processes over PostgreSQL and Redis started here (tests/datastores.py): two reader
processes, and four orchestrators with the same settings but for ``READER_ADDR`` (two reach
reader 0 only, two reach both readers through round_robin). The scripted LLM and SearXNG and the
test world's ranker and fixture pages run in this process (tests/integration), so they are the
same for every configuration. Search and page caches are off (``ORCHESTRATOR_SEARCH_CACHE_S=0``)
and rate limits too, so every question searches, reads, ranks and streams an answer.

Each configuration answers the same questions, CONCURRENCY at a time, spread round-robin over
its orchestrators; questions/second is the result. On a 2-core machine every process competes
for the same two cores (and the scripted LLM, SearXNG and the ranker share this one process),
so expect a ratio near 1: the point is that nothing serialises across replicas (no shared lock,
no single writer), not that two processes double two cores.

Run: ``.venv/bin/python bench/scale/bench_replicas.py`` (``make bench``), a few minutes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from services.orchestrator.tests.fakes.fake_llm import FakeLLM  # noqa: E402
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng  # noqa: E402
from services.orchestrator.tests.integration.support import results_for, serve_world  # noqa: E402
from tests.datastores import postgres_server, redis_server  # noqa: E402
from tests.replicas import (  # noqa: E402
    Proc,
    cluster_env,
    readers_addr,
    start_orchestrators,
    start_readers,
    stop_all,
)

QUESTIONS = 36
# Every configuration is measured in each round, in turn, so the box's load drifts over all.
ROUNDS = 2
CONCURRENCY = 6


async def _ask(client: httpx.AsyncClient, base: str, i: int) -> None:
    reply = await client.post(
        f"{base}/v1/search",
        json={"query": f"what causes tides, variant {i}"},
        headers={"Accept": "application/x-ndjson"},
    )
    assert reply.status_code == 200, reply.text
    last = json.loads(reply.text.splitlines()[-1])
    assert last["type"] == "run.completed", last
    assert last["data"]["status"] == "answered", last


async def _throughput(bases: list[str], start: int) -> float:
    spread = itertools.cycle(bases)
    targets = [next(spread) for _ in range(QUESTIONS)]
    limit = asyncio.Semaphore(CONCURRENCY)
    async with httpx.AsyncClient(timeout=120) as client:

        async def one(i: int) -> None:
            async with limit:
                await _ask(client, targets[i], start + i)

        began = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(QUESTIONS)))
        return QUESTIONS / (time.perf_counter() - began)


async def _start(folder: Path, procs: list[Proc], common: dict[str, str]) -> dict[str, list[str]]:
    readers = await start_readers(folder, procs)
    apis: dict[str, list[str]] = {}
    for label, addr in (
        ("1 reader", f"127.0.0.1:{readers[0].port}"),
        ("2 readers", readers_addr(readers)),
    ):
        env = {**common, "READER_ADDR": addr}
        names = [f"api-{label[0]}r-{i}" for i in range(2)]
        started = await start_orchestrators(folder, procs, env, names)
        apis[label] = [f"http://127.0.0.1:{p.port}" for p in started]
    return apis


async def main() -> None:
    procs: list[Proc] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        postgres_server() as pg,
        redis_server() as rd,
    ):
        async with (
            serve_world() as world,
            FakeLLM() as llm,
            FakeSearxng(results_for(world)) as searx,
        ):
            common = cluster_env(
                world,
                llm,
                searx,
                pg.new_database(),
                rd.url,
                ORCHESTRATOR_RATE_QUESTIONS="off",
                ORCHESTRATOR_SEARCH_CACHE_S="0",
                ORCHESTRATOR_LOG_LEVEL="WARNING",
            )
            try:
                apis = await _start(Path(tmp), procs, common)
                for bases in apis.values():
                    await _throughput(bases, 10_000)  # warm every replica's channels
                rows: dict[tuple[int, str], list[float]] = {}
                n = 0
                for _ in range(ROUNDS):
                    for orchestrators in (1, 2):
                        for label, bases in apis.items():
                            n += QUESTIONS
                            rate = await _throughput(bases[:orchestrators], n)
                            rows.setdefault((orchestrators, label), []).append(rate)
            finally:
                await asyncio.to_thread(stop_all, procs)
    base = statistics.mean(rows[(1, "1 reader")])
    print(f"{QUESTIONS} questions, {CONCURRENCY} at a time, per configuration and round")
    print(
        f"{'orchestrators':>13} {'readers':>10} {'questions/s per round':>24} {'mean vs 1+1':>12}"
    )
    for (orchestrators, label), rates in rows.items():
        each = "  ".join(f"{q:5.2f}" for q in rates)
        ratio = statistics.mean(rates) / base
        print(f"{orchestrators:>13} {label:>10} {each:>24} {ratio:11.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
