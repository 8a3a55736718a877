"""A schedule's row and the store it lives in (SQLite or PostgreSQL: adapters/store/).

Every state change the scheduler makes is one conditional write (``claim``, ``finish``), so on a
shared database only one replica fires a given run and only one finishes it: the others' writes
match no row and they move on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

# pending_run_id while the run is being created (between the claim and the run's id).
STARTING = "starting"


@dataclass(frozen=True)
class Schedule:
    """A saved research question and when it runs; ``owner`` alone (or an admin) sees it."""

    id: str
    owner: str
    name: str
    query: str
    mode: str
    sources: list[str] | None
    cron: str
    timezone: str
    paused: bool
    created_at: float
    updated_at: float
    next_run_at: float | None
    webhook_url: str | None = None
    # Signs the webhook's body (HMAC-SHA256); written once, never shown, never logged.
    webhook_secret: str | None = field(default=None, repr=False)
    pending_run_id: str | None = None
    pending_since: float | None = None
    last_run_id: str | None = None
    last_run_at: float | None = None
    last_status: str | None = None
    last_error: str | None = None
    last_changes: dict[str, Any] | None = None
    # The last completed run's report and sources: what the next run is compared with (kept
    # here, so the comparison outlives the run's own expiry, ORCHESTRATOR_RESEARCH_TTL_S).
    baseline: dict[str, Any] | None = field(default=None, repr=False)
    runs: int = 0
    notified_at: float | None = None


@dataclass(frozen=True)
class Outcome:
    """What ``finish`` records about a run that ended."""

    run_id: str
    status: str
    at: float
    error: str | None
    changes: dict[str, Any] | None
    baseline: dict[str, Any] | None  # None: keep the previous one (the run did not complete)


class ScheduleStore(Protocol):
    """Schedules in a database; every method is one transaction."""

    async def create(self, schedule: Schedule) -> None:
        """Insert a new schedule."""
        ...

    async def get(self, schedule_id: str) -> Schedule | None:
        """The schedule, or None."""
        ...

    async def list_page(
        self, owner: str | None, limit: int, offset: int
    ) -> tuple[list[Schedule], int]:
        """A page of the owner's schedules (everyone's for None), newest first, and the total."""
        ...

    async def count(self, owner: str) -> int:
        """How many schedules ``owner`` has."""
        ...

    async def update(self, schedule: Schedule) -> bool:
        """Write the editable fields (name, query, mode, sources, cron, timezone, paused,
        webhook, next_run_at, updated_at); False when it is gone."""
        ...

    async def delete(self, schedule_id: str) -> bool:
        """Remove it; False when it was not there."""
        ...

    async def due(self, now: float) -> list[Schedule]:
        """Schedules not paused whose next run is at or before ``now``."""
        ...

    async def claim(
        self, schedule_id: str, expected_next: float | None, next_run_at: float | None, now: float
    ) -> bool:
        """Take the firing: set ``next_run_at`` and mark a run starting, only if the next run is
        still ``expected_next`` (None: a run-now, any) and no run is pending."""
        ...

    async def skip(
        self, schedule_id: str, expected_next: float, next_run_at: float | None, reason: str
    ) -> bool:
        """Move past a firing without running it (its previous run is still going)."""
        ...

    async def started(self, schedule_id: str, run_id: str, now: float) -> None:
        """The claimed firing's run exists now."""
        ...

    async def not_started(self, schedule_id: str, error: str, now: float) -> None:
        """The claimed firing could not start a run (the cap, search off, …)."""
        ...

    async def pending(self) -> list[Schedule]:
        """Schedules with a run starting or going."""
        ...

    async def finish(self, schedule_id: str, outcome: Outcome) -> bool:
        """Record the pending run's end, only if it is still the pending one."""
        ...

    async def notified(self, schedule_id: str, now: float, error: str | None) -> None:
        """Record a webhook delivery (``error`` None: it succeeded)."""
        ...

    async def close(self) -> None:
        """Release the database."""
        ...
