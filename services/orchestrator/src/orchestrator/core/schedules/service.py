"""The schedules' use cases, per principal: create, list, show, edit, pause, delete, run now.

Another principal's schedule is "not found", exactly like one that does not exist (the same rule
as sessions and research runs). The webhook secret is taken, stored and used to sign; no view
ever includes it.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from orchestrator.core.principals import Principal
from orchestrator.core.schedules.errors import InvalidSchedule, ScheduleConflict, ScheduleNotFound
from orchestrator.core.schedules.model import Schedule, ScheduleStore
from orchestrator.core.schedules.spec import Spec, parse

Clock = Callable[[], datetime]
MIN_SECRET_CHARS = 16


class UrlCheck(Protocol):
    """Validates a webhook URL against the outgoing-request policy (adapters/webhook.py)."""

    def check(self, url: str) -> object:
        """Raise InvalidSchedule when the URL may not be called."""
        ...


@dataclass(frozen=True)
class Limits:
    """The operator's bounds on schedules."""

    min_interval_s: float = 900.0
    max_per_owner: int = 50


@dataclass(frozen=True)
class Draft:
    """A new schedule as a client sends it (validated here, not by the transport)."""

    name: str
    query: str
    cron: str
    timezone: str = "UTC"
    mode: str = "deep-research"
    sources: Sequence[str] | None = None
    paused: bool = False
    webhook_url: str | None = None
    webhook_secret: str | None = dataclasses.field(default=None, repr=False)


def _not_found(schedule_id: str) -> ScheduleNotFound:
    return ScheduleNotFound(f"No schedule {schedule_id!r}.")


def view(s: Schedule) -> dict[str, Any]:
    """A schedule as the API shows it: never the webhook secret."""
    last_run = None
    if s.last_run_id:
        last_run = {
            "research_id": s.last_run_id,
            "status": s.last_status,
            "at": s.last_run_at,
            "url": f"/v1/research/{s.last_run_id}",
        }
    pending = s.pending_run_id if s.pending_run_id and len(s.pending_run_id) == 32 else None
    return {
        "id": s.id,
        "owner": s.owner,
        "name": s.name,
        "query": s.query,
        "mode": s.mode,
        "sources": s.sources,
        "cron": s.cron,
        "timezone": s.timezone,
        "paused": s.paused,
        "next_run_at": None if s.paused else s.next_run_at,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
        "webhook": {"url": s.webhook_url, "secret_set": bool(s.webhook_secret)}
        if s.webhook_url
        else None,
        "running_id": pending,
        "last_run": last_run,
        "last_error": s.last_error,
        "last_changes": s.last_changes,
        "runs": s.runs,
        "notified_at": s.notified_at,
    }


class Schedules:
    """The use cases over a store; ``clock`` is injected (tests run on a test clock)."""

    def __init__(self, store: ScheduleStore, urls: UrlCheck, limits: Limits, clock: Clock) -> None:
        self.store = store
        self._urls = urls
        self._limits = limits
        self.clock = clock

    def _spec(self, cron: str, timezone: str) -> Spec:
        return parse(cron, timezone, self.clock(), self._limits.min_interval_s)

    def _webhook(self, url: str | None, secret: str | None) -> tuple[str | None, str | None]:
        if url is None:
            return None, None
        self._urls.check(url)
        if secret is None or len(secret) < MIN_SECRET_CHARS:
            raise InvalidSchedule(
                f"A webhook needs a secret of at least {MIN_SECRET_CHARS} characters: its "
                "deliveries are signed with it (HMAC-SHA256), so the receiver can check them."
            )
        return url.strip(), secret

    async def create(self, who: Principal, draft: Draft) -> Schedule:
        """Save a new schedule owned by ``who``.

        Raises:
            InvalidSchedule: a bad cron, zone or webhook.
            ScheduleConflict: ``who`` has as many schedules as allowed.
        """
        spec = self._spec(draft.cron, draft.timezone)
        url, secret = self._webhook(draft.webhook_url, draft.webhook_secret)
        if await self.store.count(who.id) >= self._limits.max_per_owner:
            raise ScheduleConflict(
                f"You have {self._limits.max_per_owner} schedules, the most allowed "
                "(ORCHESTRATOR_SCHEDULE_MAX_PER_OWNER); delete one first."
            )
        now = self.clock()
        schedule = Schedule(
            id=uuid.uuid4().hex,
            owner=who.id,
            name=draft.name.strip(),
            query=draft.query.strip(),
            mode=draft.mode,
            sources=list(draft.sources) if draft.sources is not None else None,
            cron=spec.cron,
            timezone=spec.timezone,
            paused=draft.paused,
            created_at=now.timestamp(),
            updated_at=now.timestamp(),
            next_run_at=spec.next_after(now).timestamp(),
            webhook_url=url,
            webhook_secret=secret,
        )
        await self.store.create(schedule)
        return schedule

    async def get(self, who: Principal, schedule_id: str) -> Schedule:
        """The schedule, if ``who`` may see it.

        Raises:
            ScheduleNotFound: no such schedule (for ``who``).
        """
        found = await self.store.get(schedule_id)
        if found is None or not who.may_see(found.owner):
            raise _not_found(schedule_id)
        return found

    async def list_page(
        self, who: Principal, limit: int, offset: int
    ) -> tuple[list[Schedule], int]:
        """A page of ``who``'s schedules, newest first."""
        return await self.store.list_page(who.id, limit, offset)

    async def update(self, who: Principal, schedule_id: str, changes: dict[str, Any]) -> Schedule:
        """Edit a schedule; ``changes`` holds only the fields sent. A new cron or zone, or a
        resume, sets the next run to the next firing from now (a resume never catches up).

        Raises:
            ScheduleNotFound: no such schedule (for ``who``).
            InvalidSchedule: a bad cron, zone or webhook.
        """
        current = await self.get(who, schedule_id)
        fields = {k: v for k, v in changes.items() if k not in {"webhook_url", "webhook_secret"}}
        updated = dataclasses.replace(current, **fields)
        if "webhook_url" in changes or "webhook_secret" in changes:
            url = changes.get("webhook_url", current.webhook_url)
            secret = changes.get("webhook_secret", current.webhook_secret)
            url, secret = self._webhook(url, secret)
            updated = dataclasses.replace(updated, webhook_url=url, webhook_secret=secret)
        now = self.clock()
        spec = self._spec(updated.cron, updated.timezone)
        retimed = {"cron", "timezone"} & changes.keys() or (current.paused and not updated.paused)
        next_run_at = spec.next_after(now).timestamp() if retimed else current.next_run_at
        updated = dataclasses.replace(
            updated,
            cron=spec.cron,
            name=updated.name.strip(),
            query=updated.query.strip(),
            next_run_at=next_run_at,
            updated_at=now.timestamp(),
        )
        if not await self.store.update(updated):
            raise _not_found(schedule_id)
        return updated

    async def delete(self, who: Principal, schedule_id: str) -> None:
        """Remove a schedule (its runs stay, like any research run).

        Raises:
            ScheduleNotFound: no such schedule (for ``who``).
        """
        await self.get(who, schedule_id)
        if not await self.store.delete(schedule_id):
            raise _not_found(schedule_id)
