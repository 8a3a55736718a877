"""HTTP routes of scheduled research: /v1/schedules (create, list, show, edit, delete, run now).

Schedules are their owner's: another principal's schedule is a 404 like one that never existed.
The webhook secret is write-only (a SecretStr here, never in a response or a log line).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from orchestrator.api.http.models import MAX_OFFSET, MAX_PAGE, Problem
from orchestrator.api.http.research_models import EmptyRequest
from orchestrator.api.shared.deps import PrincipalDep
from orchestrator.api.shared.ratelimit import enforce
from orchestrator.core.errors import ResearchUnavailable
from orchestrator.core.policy import research_sources
from orchestrator.core.schedules.runner import Scheduler
from orchestrator.core.schedules.service import Draft, view

SCHEDULE_ID_PATTERN = r"^[0-9a-f]{32}$"
_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "content": {"application/problem+json": {}}}
    for code in (400, 404, 409, 413, 415, 422, 429, 503)
}

router = APIRouter(prefix="/v1/schedules", tags=["schedules"])
ScheduleId = Annotated[str, Path(pattern=SCHEDULE_ID_PATTERN)]
CRON_HELP = 'cron ("0 6 * * 1-5") or daily, weekly, hourly'
ZONE_HELP = "an IANA time zone, e.g. Europe/Paris"


class Webhook(BaseModel):
    """Where a finished run is announced, and the secret its deliveries are signed with."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=2048, description="http(s); public addresses only")
    secret: SecretStr = Field(
        min_length=16, max_length=256, description="HMAC-SHA256 key; write-only"
    )


class ScheduleOptions(BaseModel):
    """The runs' options."""

    model_config = ConfigDict(extra="forbid")

    sources: list[Literal["web", "local"]] | None = Field(default=None, min_length=1)


class ScheduleCreate(BaseModel):
    """POST /v1/schedules."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000, description="what to research each time")
    name: str | None = Field(default=None, min_length=1, max_length=200)
    cron: str = Field(min_length=1, max_length=120, description=CRON_HELP)
    timezone: str = Field(default="UTC", min_length=1, max_length=64, description=ZONE_HELP)
    mode: Literal["deep-research", "due-diligence"] = "deep-research"
    options: ScheduleOptions = Field(default_factory=ScheduleOptions)
    paused: bool = False
    webhook: Webhook | None = None


class SchedulePatch(BaseModel):
    """PATCH /v1/schedules/{id}: only the fields sent change; ``webhook: null`` removes it."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(default=None, min_length=1, max_length=2000)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    cron: str | None = Field(default=None, min_length=1, max_length=120)
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    mode: Literal["deep-research", "due-diligence"] | None = None
    options: ScheduleOptions | None = None
    paused: bool | None = None
    webhook: Webhook | None = None


def get_scheduler(request: Request) -> Scheduler:
    """The app's scheduler.

    Raises:
        ResearchUnavailable: the app has no deep research (so nothing to schedule).
    """
    scheduler: Scheduler | None = getattr(request.app.state, "schedules", None)
    if scheduler is None:
        raise ResearchUnavailable("Scheduled research needs deep research, not available here.")
    return scheduler


SchedulerDep = Annotated[Scheduler, Depends(get_scheduler)]


def _sources(asked: Sequence[str] | None, request: Request) -> list[str] | None:
    if asked is not None:
        research_sources(asked, request.app.state.runtime.deps.settings)  # 422 when none left
    return list(asked) if asked is not None else None


@router.post("", status_code=201, responses=_PROBLEMS)
async def create(
    body: ScheduleCreate, request: Request, who: PrincipalDep, scheduler: SchedulerDep
) -> dict[str, Any]:
    """Save a research question that runs on a schedule."""
    hook = body.webhook
    draft = Draft(
        name=body.name or body.query[:80],
        query=body.query,
        cron=body.cron,
        timezone=body.timezone,
        mode=body.mode,
        sources=_sources(body.options.sources, request),
        paused=body.paused,
        webhook_url=hook.url if hook else None,
        webhook_secret=hook.secret.get_secret_value() if hook else None,
    )
    return view(await scheduler.create(who, draft))


@router.get("", responses=_PROBLEMS)
async def list_schedules(
    who: PrincipalDep,
    scheduler: SchedulerDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    """The caller's schedules, newest first."""
    found, total = await scheduler.list_page(who, limit, offset)
    return {"schedules": [view(s) for s in found], "total": total, "limit": limit, "offset": offset}


@router.get("/{schedule_id}", responses=_PROBLEMS)
async def show(
    schedule_id: ScheduleId, who: PrincipalDep, scheduler: SchedulerDep
) -> dict[str, Any]:
    """One schedule: its timetable, its last run (with a link) and what changed then."""
    return view(await scheduler.get(who, schedule_id))


@router.patch("/{schedule_id}", responses=_PROBLEMS)
async def edit(
    schedule_id: ScheduleId,
    body: SchedulePatch,
    request: Request,
    who: PrincipalDep,
    scheduler: SchedulerDep,
) -> dict[str, Any]:
    """Edit, pause (``paused: true``) or resume a schedule."""
    sent = body.model_fields_set
    changes: dict[str, Any] = {
        k: getattr(body, k)
        for k in ("query", "name", "cron", "timezone", "mode", "paused")
        if k in sent and getattr(body, k) is not None
    }
    if "options" in sent and body.options is not None:
        changes["sources"] = _sources(body.options.sources, request)
    if "webhook" in sent:
        hook = body.webhook
        changes["webhook_url"] = hook.url if hook else None
        changes["webhook_secret"] = hook.secret.get_secret_value() if hook else None
    return view(await scheduler.update(who, schedule_id, changes))


@router.delete("/{schedule_id}", status_code=204, responses=_PROBLEMS)
async def delete(schedule_id: ScheduleId, who: PrincipalDep, scheduler: SchedulerDep) -> Response:
    """Delete a schedule; the runs it made stay, like any research run."""
    await scheduler.delete(who, schedule_id)
    return Response(status_code=204)


@router.post("/{schedule_id}/run", status_code=202, responses=_PROBLEMS)
async def run_now(
    schedule_id: ScheduleId,
    request: Request,
    who: PrincipalDep,
    scheduler: SchedulerDep,
    body: EmptyRequest | None = None,
) -> dict[str, Any]:
    """Run the schedule's question now (its timetable is unchanged)."""
    await enforce(request, "research")
    run_id = await scheduler.run_now(who, schedule_id)
    return {
        "research_id": run_id,
        "events_url": f"/v1/research/{run_id}/events",
        "schedule": view(await scheduler.get(who, schedule_id)),
    }
