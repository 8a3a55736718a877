"""Quarry scaled out on this machine, every part a real process or server: PostgreSQL 15 and
redis-server (Debian's, started and stopped by the test), two orchestrators (A, B), two research
workers and two reader processes, over the scripted LLM and SearXNG (the wire-format fakes the
other integration tests use) and the shared test world (ranker, index, fixture pages).

It shows: a run started through A and followed through B; the worker executing it SIGKILLed
mid-run and the other worker finishing it with a complete report; the stream resumed on the
other replica with Last-Event-ID, no gap and no duplicate; questions spread over both readers;
one rate limit across both replicas; user B unable to see or touch user A's runs and
sessions through either replica; DELETE through one replica reaching the worker of a run started
through the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import pytest_asyncio

from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Hang
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
from services.orchestrator.tests.integration.research_support import Ev, parse_sse, research_reply
from services.orchestrator.tests.integration.support import (
    World,
    judge,
    results_for,
    serve_world,
)
from tests.datastores import Postgres, Redis
from tests.replicas import (
    Proc,
    cluster_env,
    readers_addr,
    start_orchestrators,
    start_readers,
    stop_all,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(900)]

TOKENS = {"ann": "ann-" + "a1" * 16, "bob": "bob-" + "b2" * 16, "cy": "cy-" + "c3" * 16}
# Small enough to reach in the test, big enough for what the tests ask.
QUESTIONS_PER_MINUTE = 4


@dataclass
class Cluster:
    """Everything the tests reach."""

    api: list[str]
    workers: list[Proc]
    readers: list[Proc]
    llm: FakeLLM
    db_url: str
    procs: list[Proc] = field(default_factory=list)

    def client(self, replica: int, user: str) -> httpx.AsyncClient:
        headers = {"authorization": f"Bearer {TOKENS[user]}"}
        return httpx.AsyncClient(base_url=self.api[replica], headers=headers, timeout=60)


@contextlib.contextmanager
def _datastores() -> Iterator[tuple[Postgres, Redis]]:
    from tests.datastores import Unavailable, postgres_server, redis_server

    try:
        with postgres_server() as pg, redis_server() as rd:
            yield pg, rd
    except Unavailable as err:
        pytest.skip(str(err))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    folder = tmp_path_factory.mktemp("replicas")
    procs: list[Proc] = []
    with _datastores() as (pg, rd):
        async with (
            serve_world() as world,
            FakeLLM(script=research_reply) as llm,
            FakeSearxng(results_for(world)) as searx,
        ):
            try:
                yield await _start(folder, procs, world, llm, searx, pg.new_database(), rd.url)
            finally:
                await asyncio.to_thread(stop_all, procs)


async def _start(
    folder: Path,
    procs: list[Proc],
    world: World,
    llm: FakeLLM,
    searx: FakeSearxng,
    db_url: str,
    redis_url: str,
) -> Cluster:
    readers = await start_readers(folder, procs)
    common = cluster_env(
        world,
        llm,
        searx,
        db_url,
        redis_url,
        READER_ADDR=readers_addr(readers),
        ORCHESTRATOR_API_TOKENS=",".join(f"{u}:{t}" for u, t in TOKENS.items()),
        ORCHESTRATOR_RATE_QUESTIONS=f"{QUESTIONS_PER_MINUTE}/minute",
        ORCHESTRATOR_RESEARCH_REVIEW_DELAY_S="0",
        ORCHESTRATOR_RESEARCH_LEASE_S="5",
        ORCHESTRATOR_READ_RETRY_DELAY_S="0.05",
        ORCHESTRATOR_SYNTHESIS_RESERVE_S="1",
        ORCHESTRATOR_LOG_LEVEL="INFO",
    )
    apis = await start_orchestrators(folder, procs, common, ["api0", "api1"])
    workers = await start_orchestrators(
        folder, procs, common, ["worker0", "worker1"], module="orchestrator.worker"
    )
    return Cluster([f"http://127.0.0.1:{p.port}" for p in apis], workers, readers, llm, db_url)


async def _stream(
    client: httpx.AsyncClient,
    run_id: str,
    after: int | None = None,
    stop: Callable[[Ev], bool] = lambda _e: False,
) -> list[Ev]:
    """Follow a run's SSE stream until ``stop`` says so or the stream ends."""
    headers = {} if after is None else {"Last-Event-ID": str(after)}
    seen: list[Ev] = []
    buffer = ""
    async with client.stream("GET", f"/v1/research/{run_id}/events", headers=headers) as reply:
        assert reply.status_code == 200, await reply.aread()
        async for chunk in reply.aiter_text():
            buffer += chunk
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                seen += parse_sse(block + "\n\n")[0]
                if seen and stop(seen[-1]):
                    return seen
    return seen


async def _holder(db_url: str, run_id: str) -> str | None:
    async with await psycopg.AsyncConnection.connect(db_url) as conn:
        cur = await conn.execute("SELECT lease_owner FROM research_runs WHERE id=%s", (run_id,))
        row = await cur.fetchone()
    return None if row is None else row[0]


def _pid(holder: str) -> int:
    return int(holder.rsplit("-", 2)[1])


async def test_a_run_survives_its_worker_killed_and_is_followed_across_replicas(
    cluster: Cluster,
) -> None:
    cluster.llm.queue("synthesis", Hang())  # the first report call never ends: kill it there
    async with cluster.client(0, "ann") as a, cluster.client(1, "ann") as b:
        reply = await a.post("/v1/research", json={"query": "how do tides work"})
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["research_id"]
        # Followed through B (the run was started through A), up to the report phase.
        head = await _stream(
            b, run_id, stop=lambda e: e.type == "phase.started" and e.data["phase"] == "synthesis"
        )
        await cluster.llm.wait_until(lambda: bool(cluster.llm.calls_of("synthesis")), 60)
        holder = await _holder(cluster.db_url, run_id)
        assert holder is not None
        victim = next(w for w in cluster.workers if w.proc.pid == _pid(holder))
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        # The client reconnects to the other replica, A, with the last id it saw.
        tail = await _stream(a, run_id, after=head[-1].id)
        events = head + tail
        assert [e.id for e in events] == list(range(len(events)))  # no gap, no duplicate
        assert events[-1].type == "research.completed", [e.type for e in events[-8:]]
        view = (await b.get(f"/v1/research/{run_id}")).json()
        assert view["status"] == "completed"
        assert view["report"]
        finisher = await _holder(cluster.db_url, run_id)
        assert finisher is not None
        assert _pid(finisher) != victim.proc.pid
        assert any(w.proc.pid == _pid(finisher) and w.proc.poll() is None for w in cluster.workers)
    # What user B may not see or touch, through either replica.
    for replica in (0, 1):
        async with cluster.client(replica, "bob") as bob:
            assert (await bob.get(f"/v1/research/{run_id}")).status_code == 404
            assert (await bob.get(f"/v1/research/{run_id}/events")).status_code == 404
            assert (await bob.delete(f"/v1/research/{run_id}")).status_code == 404
            assert (await bob.post(f"/v1/research/{run_id}/resume", json={})).status_code == 404
            listed = (await bob.get("/v1/research")).json()
            assert run_id not in json.dumps(listed)


async def _ask(client: httpx.AsyncClient, query: str, **body: Any) -> httpx.Response:
    return await client.post(
        "/v1/search", json={"query": query, **body}, headers={"Accept": "application/x-ndjson"}
    )


def _reads(reader: Proc) -> int:
    return sum(1 for line in reader.lines() if '"read"' in line or " read " in line)


async def test_a_session_spans_both_replicas_and_stays_its_owners(cluster: Cluster) -> None:
    async with cluster.client(0, "ann") as a, cluster.client(1, "ann") as b:
        for i, client in enumerate((a, b, a, b)):
            reply = await _ask(client, f"what causes tides {i}", session_id="ann-notes")
            assert reply.status_code == 200, reply.text
        # One conversation, whichever replica answered each turn.
        session = (await b.get("/v1/sessions/ann-notes")).json()
        assert len(session["turns"]) == 4
    for replica in (0, 1):
        async with cluster.client(replica, "bob") as bob:
            assert (await bob.get("/v1/sessions/ann-notes")).status_code == 404
            assert (await bob.delete("/v1/sessions/ann-notes")).status_code == 404
            assert "ann-notes" not in (await bob.get("/v1/sessions")).text


async def test_questions_spread_over_both_readers(cluster: Cluster) -> None:
    """Each question's snippets are judged insufficient, so its pages are read to the end (a
    question answered from snippets cancels its speculative reads, and whether a reader finishes
    one first is a matter of speed). round_robin sends a call only to an address that is ready,
    so the very first reads may all reach one reader; within the questions a minute allows,
    through both replicas, both readers must have served some."""
    before = [_reads(r) for r in cluster.readers]
    after = before
    async with cluster.client(0, "cy") as a, cluster.client(1, "cy") as b:
        for i in range(QUESTIONS_PER_MINUTE):
            cluster.llm.queue("judge", judge("insufficient"), judge("sufficient"))
            reply = await _ask((a, b)[i % 2], f"what is a spring tide {i}")
            assert reply.status_code == 200, reply.text
            after = [_reads(r) for r in cluster.readers]
            if all(n > m for n, m in zip(after, before, strict=True)):
                return
    pytest.fail(f"reads per reader before {before}, after {after}")


async def test_one_rate_limit_across_both_replicas(cluster: Cluster) -> None:
    async with cluster.client(0, "bob") as a, cluster.client(1, "bob") as b:
        for i in range(QUESTIONS_PER_MINUTE):  # half through each replica
            reply = await _ask(a if i % 2 else b, f"what is a neap tide {i}")
            assert reply.status_code == 200, reply.text
        for client in (a, b):
            refused = await _ask(client, "one more")
            assert refused.status_code == 429, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
            assert int(refused.headers["retry-after"]) >= 1


async def test_delete_on_one_replica_reaches_the_worker_running_the_run(cluster: Cluster) -> None:
    cluster.llm.queue("other", Hang())  # the run's scope call never answers: it stays running
    async with cluster.client(1, "ann") as b, cluster.client(0, "ann") as a:
        reply = await b.post("/v1/research", json={"query": "why are there two tides a day"})
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["research_id"]
        await _stream(a, run_id, stop=lambda e: e.type == "phase.started")
        assert await _holder(cluster.db_url, run_id) is not None
        cancelled = await a.delete(f"/v1/research/{run_id}")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["status"] == "cancelled"
        events = await _stream(b, run_id)
        assert events[-1].type == "research.cancelled"
        assert [e.id for e in events] == list(range(len(events)))
