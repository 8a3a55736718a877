"""Scheduled research on two API replicas sharing one real PostgreSQL (started by the test), with
a research worker, on one TEST CLOCK: both replicas' schedulers tick at the same moment, again
and again, and still one run fires, one worker runs it, and the receiver gets one delivery."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest
from orchestrator.app import create_app
from orchestrator.config import Settings
from orchestrator.core.schedules.runner import Scheduler
from orchestrator.core.schedules.signing import HEADER, verify

from services.orchestrator.tests.integration.research_support import Api, fakes, serve
from services.orchestrator.tests.integration.support import World, world
from services.orchestrator.tests.integration.test_research_workers import _worker
from services.orchestrator.tests.integration.test_schedules import (
    SECRET,
    START,
    ManualClock,
    Receiver,
)
from tests.datastores import Postgres, postgres

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["postgres", "world"]


@asynccontextmanager
async def replicas(
    world: World, postgres: Postgres, clock: ManualClock
) -> AsyncIterator[tuple[Api, Api, Scheduler, Scheduler]]:
    shared: dict[str, Any] = {
        "database_url": postgres.new_database(),
        "research_lease_s": 5.0,
        "webhook_allow_private": True,
        "webhook_backoff_s": 0.0,
        "schedule_poll_s": 3600.0,
        "research_max_evaluations": 0,
        "rate_research": "off",
    }
    async with AsyncExitStack() as es:
        f = await es.enter_async_context(fakes(world, **shared))
        app_a = create_app(Settings(**f.settings), clock=clock)
        app_b = create_app(Settings(**f.settings), clock=clock)
        a = await es.enter_async_context(serve(app_a))
        b = await es.enter_async_context(serve(app_b))
        await es.enter_async_context(_worker(Settings(**f.settings), "w0"))
        yield a, b, app_a.state.schedules, app_b.state.schedules


async def test_two_replicas_ticking_together_fire_once_and_notify_once(
    world: World, postgres: Postgres
) -> None:
    clock = ManualClock(START)
    receiver = Receiver()
    await receiver.server.start()
    try:
        async with replicas(world, postgres, clock) as (a, b, sa, sb):
            body = {
                "query": "how do tides work",
                "cron": "daily",
                "webhook": {"url": receiver.url, "secret": SECRET},
            }
            made = await a.client.post("/v1/schedules", json=body)
            assert made.status_code == 201, made.text
            sid = made.json()["id"]
            assert (await b.client.get(f"/v1/schedules/{sid}")).status_code == 200

            clock.now = START + timedelta(days=1)
            await asyncio.gather(sa.tick(), sb.tick(), sa.tick(), sb.tick())
            runs = (await b.client.get("/v1/research")).json()
            assert runs["total"] == 1, runs
            run_id = runs["runs"][0]["research_id"]
            events = await b.events(run_id)  # executed by the worker
            assert events[-1].type == "research.completed"

            await asyncio.gather(sa.tick(), sb.tick(), sa.tick(), sb.tick())
            assert len(receiver.deliveries) == 1
            delivery = receiver.deliveries[0]
            header = delivery.headers[HEADER.lower()]
            stamp = int(header.split(",")[0].removeprefix("t="))
            assert verify(SECRET, header, delivery.body, now=stamp)
            assert json.loads(delivery.body)["run"]["research_id"] == run_id
            shown = (await a.client.get(f"/v1/schedules/{sid}")).json()
            assert shown["runs"] == 1
            assert shown["last_run"]["research_id"] == run_id
            report = (await a.client.get(f"/v1/research/{run_id}")).json()["report"]
            assert "## What changed since the last run" in report
    finally:
        await receiver.server.stop()
