"""Firing schedules and finishing their runs: one ``tick`` at a time, on an injected clock.

A tick first finishes the runs that ended (the "what changed" section into the report, then the
webhook), then fires every due schedule once. A firing's next run is the schedule's next time
*after now*, so a server that was off for five days fires a daily schedule once on start, not
five times. Every step is a conditional write (model.py): replicas sharing PostgreSQL tick
side by side and each firing and each finish happens on one of them only.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable
from typing import Any, Protocol

from orchestrator.core.errors import DomainError
from orchestrator.core.policy import DomainSettings, domains_for
from orchestrator.core.principals import Principal
from orchestrator.core.research.manager import ResearchManager
from orchestrator.core.research.state import FINISHED, ResearchState
from orchestrator.core.schedules import changes as diff
from orchestrator.core.schedules.errors import InvalidSchedule, NotifyFailed, ScheduleConflict
from orchestrator.core.schedules.model import STARTING, Outcome, Schedule, ScheduleStore
from orchestrator.core.schedules.service import Clock, Limits, Schedules, UrlCheck
from orchestrator.core.schedules.spec import Spec
from orchestrator.core.store import RunRecord

logger = logging.getLogger(__name__)
# A claim whose run never got an id (the process died between the two writes) is let go after
# this long, so the schedule is not stuck "starting" for ever.
STARTING_TTL_S = 600.0
EVENT = "schedule.run.completed"


class Notifier(Protocol):
    """Delivers a signed notification (adapters/webhook.py)."""

    def deliver(self, url: str, secret: str, payload: dict[str, Any]) -> Awaitable[int]:
        """POST ``payload``; the attempts it took. Raises NotifyFailed."""
        ...


def _sources(state: ResearchState) -> list[diff.SourceRef]:
    return [diff.SourceRef(s.url, s.title) for s in state.sources]


def _baseline(run_id: str, state: ResearchState) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "report": state.report,
        "sources": [{"url": s.url, "title": s.title} for s in state.sources],
    }


def _before(baseline: dict[str, Any] | None) -> tuple[str, list[diff.SourceRef]] | None:
    if not baseline:
        return None
    refs = [diff.SourceRef(str(s["url"]), str(s.get("title", ""))) for s in baseline["sources"]]
    return str(baseline.get("report", "")), refs


class Scheduler(Schedules):
    """The use cases plus the firing loop; one per app (every replica runs one)."""

    def __init__(
        self,
        store: ScheduleStore,
        urls: UrlCheck,
        limits: Limits,
        clock: Clock,
        *,
        research: ResearchManager,
        settings: DomainSettings,
        notifier: Notifier,
        poll_s: float,
    ) -> None:
        super().__init__(store, urls, limits, clock)
        self._research = research
        self._settings = settings
        self._notifier = notifier
        self._poll_s = poll_s
        self._lock = asyncio.Lock()

    async def run(self) -> None:
        """Tick now (missed runs fire once), then every ``poll_s`` until cancelled."""
        while True:
            try:
                await self.tick()
            except Exception:  # a bad tick must not stop the schedules for good
                logger.exception("a schedule tick failed")
            await asyncio.sleep(self._poll_s)

    async def tick(self) -> None:
        """Finish the runs that ended, then fire the due schedules."""
        async with self._lock:  # the loop and a test's tick never interleave in one process
            now = self.clock().timestamp()
            for schedule in await self.store.pending():
                await self._finish(schedule, now)
            for schedule in await self.store.due(now):
                await self._fire(schedule, now)

    def _next(self, s: Schedule) -> float | None:
        try:
            return Spec(s.cron, s.timezone).next_after(self.clock()).timestamp()
        except InvalidSchedule:
            return None  # cannot happen for a validated schedule; never fires again if it does

    async def _fire(self, s: Schedule, now: float) -> None:
        following = self._next(s)
        if s.pending_run_id:
            reason = "Skipped a run: the previous one had not finished."
            if s.next_run_at is not None:
                await self.store.skip(s.id, s.next_run_at, following, reason)
            return
        if await self.store.claim(s.id, s.next_run_at, following, now):
            await self._start(s, now)

    async def run_now(self, who: Principal, schedule_id: str) -> str:
        """Start a run of the schedule at once (its timetable unchanged); the run's id.

        Raises:
            ScheduleNotFound: no such schedule (for ``who``).
            ScheduleConflict: a run of it is still going.
            DomainError: the run cannot start (the research cap, nothing to search).
        """
        s = await self.get(who, schedule_id)
        now = self.clock().timestamp()
        if s.pending_run_id or not await self.store.claim(s.id, None, s.next_run_at, now):
            raise ScheduleConflict("A run of this schedule is still going.")
        record = await self._start(s, now)
        if isinstance(record, DomainError):
            raise record
        return record.id

    async def _start(self, s: Schedule, now: float) -> RunRecord | DomainError:
        try:
            query, domains = domains_for(s.query, None, self._settings)
            record = await self._research.create(
                query, s.mode, None, s.sources or (), s.owner, domains=domains
            )
        except DomainError as exc:
            logger.warning("a scheduled run did not start", extra={"schedule_id": s.id})
            await self.store.not_started(s.id, exc.detail, now)
            return exc
        await self.store.started(s.id, record.id, now)
        logger.info("scheduled run started", extra={"schedule_id": s.id, "research_id": record.id})
        return record

    async def _finish(self, s: Schedule, now: float) -> None:
        run_id = s.pending_run_id or ""
        if run_id == STARTING:
            if (s.pending_since or 0.0) < now - STARTING_TTL_S:
                await self.store.not_started(s.id, "The run did not start.", now)
            return
        record = await self._research.store.get_run(run_id)
        # Settled only with finished_at: a run's executor sets it just before its last save
        # (ResearchRun.execute), so a row that has it is the final one, and the report written
        # below is not overwritten by a save still on its way.
        if record is not None and (record.status not in FINISHED or record.finished_at is None):
            return
        if record is None:
            outcome = Outcome(run_id, "expired", now, "The run is gone.", None, None)
            await self.store.finish(s.id, outcome)
            return
        state = ResearchState.model_validate(record.state)
        completed = record.status == "completed"
        changes = diff.compare(
            (s.baseline or {}).get("run_id"), _before(s.baseline), (state.report, _sources(state))
        )
        error = (state.error or {}).get("message") if record.status == "failed" else None
        outcome = Outcome(
            run_id,
            record.status,
            now,
            error,
            changes.as_json() if completed else None,
            _baseline(run_id, state) if completed else None,
        )
        if not await self.store.finish(s.id, outcome):
            return  # another replica finished it
        text = diff.section(changes) if completed else ""
        if completed and state.report:
            await self._add_section(record, state, text, now)
        if s.webhook_url and s.webhook_secret:
            await self._notify(s, record, changes.as_json() if completed else None, text)

    async def _add_section(
        self, record: RunRecord, state: ResearchState, text: str, now: float
    ) -> None:
        state.report = diff.with_section(state.report, text)
        changed = dataclasses.replace(
            record, state=state.model_dump(mode="json"), updated_at=max(record.updated_at, now)
        )
        try:
            await self._research.store.save(changed, [])
        except Exception:  # the schedule's own record still holds the changes
            logger.exception("adding the changes to the report failed")

    async def _notify(
        self, s: Schedule, record: RunRecord, changes: dict[str, Any] | None, text: str
    ) -> None:
        payload = {
            "event": EVENT,
            "schedule": {"id": s.id, "name": s.name, "query": s.query},
            "run": {
                "research_id": record.id,
                "status": record.status,
                "finished_at": record.finished_at,
                "url": f"/v1/research/{record.id}",
            },
            "changes": changes,
            "what_changed": text,
        }
        error = None
        try:
            await self._notifier.deliver(s.webhook_url or "", s.webhook_secret or "", payload)
        except NotifyFailed as exc:
            error = f"Webhook: {exc}"
            logger.warning("a schedule's webhook failed", extra={"schedule_id": s.id})
        await self.store.notified(s.id, self.clock().timestamp(), error)
