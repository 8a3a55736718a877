"""Opening scheduled research: the schedules' store (the research store's engine: PostgreSQL with
ORCHESTRATOR_DATABASE_URL, else the SQLite file), the webhook sender, and the scheduler, whose
loop runs while the app does (every API replica runs one; docs/schedules.md)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime

from orchestrator.adapters.webhook import WebhookPolicy, WebhookSender
from orchestrator.config import Settings
from orchestrator.core.research.manager import ResearchManager
from orchestrator.core.schedules.model import ScheduleStore
from orchestrator.core.schedules.runner import Scheduler
from orchestrator.core.schedules.service import Clock, Limits


def utc_now() -> datetime:
    """The real clock."""
    return datetime.now(UTC)


async def open_schedule_store(settings: Settings) -> ScheduleStore:
    """Where schedules live: next to the research runs."""
    if settings.database_url:
        from orchestrator.adapters.store.pg_schedules import PgScheduleDB

        return await PgScheduleDB.open(settings.database_url, min(settings.database_pool_max, 4))
    from orchestrator.adapters.store.schedules_db import SqliteScheduleDB

    return await SqliteScheduleDB.open(settings.data_dir)


@asynccontextmanager
async def open_schedules(
    settings: Settings, research: ResearchManager, clock: Clock | None = None
) -> AsyncIterator[Scheduler]:
    """The scheduler, ticking (a first tick at once: runs missed while the server was off fire
    once); stopped and closed after."""
    async with AsyncExitStack() as stack:
        store = await open_schedule_store(settings)
        stack.push_async_callback(store.close)
        policy = WebhookPolicy(
            allow_private=settings.webhook_allow_private,
            timeout_s=settings.webhook_timeout_s,
            attempts=settings.webhook_attempts,
            backoff_s=settings.webhook_backoff_s,
        )
        sender = WebhookSender(policy)
        stack.push_async_callback(sender.aclose)
        scheduler = Scheduler(
            store,
            sender,
            Limits(settings.schedule_min_interval_s, settings.schedule_max_per_owner),
            clock or utc_now,
            research=research,
            settings=settings,
            notifier=sender,
            poll_s=settings.schedule_poll_s,
        )
        loop = asyncio.create_task(scheduler.run(), name="schedules")

        async def stop() -> None:
            loop.cancel()
            await asyncio.wait([loop])

        stack.push_async_callback(stop)
        yield scheduler
