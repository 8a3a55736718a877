"""Research runs on workers, in one process for speed (the multi-process version with SIGKILL is
tests/integration/test_multi_replica.py): two API apps and two ResearchWorkers over one real
PostgreSQL (started by the test), the real reader and ranker, the scripted SearXNG and LLM.

A run started through app A is followed through app B; a worker that stops hands its run back
and the other finishes it; Last-Event-ID resumes on the other app with no gap and no duplicate;
DELETE through either app reaches the worker; the cap holds across apps."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from orchestrator.adapters.store.notify import Notifier
from orchestrator.adapters.store.pg import PgStore
from orchestrator.config import Settings
from orchestrator.core.research.work import ResearchWorker
from orchestrator.core.store import CONTROL_CHANNEL, QUEUE_CHANNEL
from orchestrator.wiring.research import research_deps
from orchestrator.wiring.runtime import production_runtime
from quarry_common.settings import EXIT_BAD_CONFIG

from services.orchestrator.tests.fakes.fake_llm import Hang
from services.orchestrator.tests.integration.research_support import (
    Api,
    Fakes,
    fakes,
    serve,
    types,
)
from services.orchestrator.tests.integration.support import World, until, world
from tests.datastores import Postgres, postgres

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["postgres", "world"]


@dataclass
class Cluster:
    a: Api
    b: Api
    f: Fakes
    workers: list[ResearchWorker]
    tasks: list[asyncio.Task[None]]

    def stop_worker(self, i: int) -> asyncio.Task[None]:
        self.tasks[i].cancel()
        return self.tasks[i]


@asynccontextmanager
async def _worker(
    settings: Settings, name: str
) -> AsyncIterator[tuple[ResearchWorker, asyncio.Task[None]]]:
    async with AsyncExitStack() as es:
        runtime = await es.enter_async_context(production_runtime(settings))
        found = research_deps(runtime.deps)
        assert found is not None
        queue = await PgStore.open(settings.database_url, 4)
        es.push_async_callback(queue.close)
        notifier = Notifier(settings.database_url, (QUEUE_CHANNEL, CONTROL_CHANNEL))
        await notifier.start()
        es.push_async_callback(notifier.aclose)
        worker = ResearchWorker(queue, notifier, *found, runtime.sessions, name)
        task = asyncio.create_task(worker.run())
        try:
            yield worker, task
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@asynccontextmanager
async def cluster(world: World, postgres: Postgres, **settings: Any) -> AsyncIterator[Cluster]:
    url = postgres.new_database()
    shared = {"database_url": url, "research_lease_s": 5.0, **settings}
    async with AsyncExitStack() as es:
        f = await es.enter_async_context(fakes(world, **shared))
        a = await es.enter_async_context(serve(f.app()))
        b = await es.enter_async_context(serve(f.app()))
        workers, tasks = [], []
        for i in range(2):
            w, t = await es.enter_async_context(_worker(Settings(**f.settings), f"w{i}"))
            workers.append(w)
            tasks.append(t)
        yield Cluster(a, b, f, workers, tasks)


async def test_a_run_started_on_a_is_followed_on_b_to_a_complete_report(
    world: World, postgres: Postgres
) -> None:
    async with cluster(world, postgres) as c:
        run_id = await c.a.start()
        events = await c.b.events(run_id)
        assert [e.id for e in events] == list(range(len(events)))
        assert events[-1].type == "research.completed", types(events)
        shown = await c.a.show(run_id)
        assert shown["status"] == "completed"
        assert shown["report"]


async def test_a_stopped_worker_hands_its_run_to_the_other_and_b_resumes_the_stream(
    world: World, postgres: Postgres
) -> None:
    async with cluster(world, postgres, research_max_inflight=1) as c:
        c.f.llm.queue("synthesis", Hang())  # the first synthesis never ends: stop it there
        run_id = await c.a.start()
        head = await c.a.events_until(run_id, "phase.started")
        await until(lambda: any(run_id in w.held for w in c.workers), 30)
        holder = next(i for i, w in enumerate(c.workers) if run_id in w.held)
        await c.b.events_until(run_id, "research.finding", after=head[-1].id)
        await c.f.llm.wait_until(lambda: bool(c.f.llm.calls_of("synthesis")), 60)
        with contextlib.suppress(asyncio.CancelledError):
            await c.stop_worker(holder)
        tail = await c.b.events(run_id, after=head[-1].id)
        events = head + tail
        assert [e.id for e in events] == list(range(len(events)))
        assert events[-1].type == "research.completed", types(events)
        # The stopping worker saved the run as it stood; the other resumed it from there.
        states = [e.data["status"] for e in events if e.type == "state"]
        assert states == ["running", "queued", "running"]
        assert (await c.b.show(run_id))["status"] == "completed"


async def test_delete_through_b_cancels_the_run_a_started(world: World, postgres: Postgres) -> None:
    async with cluster(world, postgres) as c:
        c.f.llm.queue("plan", Hang())
        c.f.llm.queue("other", Hang())
        run_id = await c.a.start()
        await until(lambda: any(run_id in w.held for w in c.workers), 30)
        reply = await c.b.client.delete(f"/v1/research/{run_id}")
        assert reply.status_code == 200, reply.text
        assert reply.json()["status"] == "cancelled"
        events = await c.a.events(run_id)
        assert events[-1].type == "research.cancelled"


async def test_the_cap_counts_runs_on_every_replica(world: World, postgres: Postgres) -> None:
    async with cluster(world, postgres, research_cluster_max=1) as c:
        for w in c.tasks:
            w.cancel()  # nobody executes: the first run stays queued
        await asyncio.gather(*c.tasks, return_exceptions=True)
        await c.a.start()
        reply = await c.b.client.post("/v1/research", json={"query": "and another"})
        assert reply.status_code == 429, reply.text
        assert reply.headers["content-type"].startswith("application/problem+json")


async def test_a_worker_without_a_database_url_says_so_and_exits() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCHESTRATOR_")}
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "orchestrator.worker"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_BAD_CONFIG
    assert "ORCHESTRATOR_DATABASE_URL" in done.stderr


async def test_inline_on_postgres_runs_in_the_api_process(world: World, postgres: Postgres) -> None:
    url = postgres.new_database()
    async with fakes(world, database_url=url, research_executor="inline") as f, serve(f.app()) as a:
        run_id = await a.start()
        events = await a.events(run_id)
        assert events[-1].type == "research.completed", types(events)
    store = await PgStore.open(url)
    try:
        row = await store.get_run(run_id)
        assert row is not None
        assert (row.status, row.lease_owner) == ("completed", None)
    finally:
        await store.close()
