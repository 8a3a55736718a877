"""HTTP routes of deep research: /v1/research (start, list, show, follow, continue, resume,
cancel, export). The runs live in the ResearchManager, opened with the app (`wiring/research.py`);
the routes see them only through ``OwnedRuns`` bound to the caller, so another principal's run
is a 404 like a run that never existed."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from orchestrator.api.http.models import MAX_EVENT_ID, MAX_OFFSET, MAX_PAGE, Problem
from orchestrator.api.http.research_models import ContinueRequest, EmptyRequest, ResearchRequest
from orchestrator.api.http.routes import OwnerParam, negotiate
from orchestrator.api.shared.deps import PrincipalDep
from orchestrator.api.shared.ratelimit import enforce
from orchestrator.api.shared.sse import KEEP_ALIVE, sse
from orchestrator.core.errors import DomainError, NotAcceptable, ResearchUnavailable
from orchestrator.core.policy import domains_for, research_sources
from orchestrator.core.research.manager import ResearchManager
from orchestrator.core.research.owned import OwnedRuns
from orchestrator.core.research.views import report_markdown, summary, view
from orchestrator.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

RUN_ID_PATTERN = r"^[0-9a-f]{32}$"
_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "content": {"application/problem+json": {}}}
    for code in (400, 404, 406, 409, 413, 415, 422, 429, 503)
}


def get_manager(request: Request, who: PrincipalDep) -> OwnedRuns:
    """The app's research runs as the caller sees them.

    Raises:
        ResearchUnavailable: the app has no research manager.
    """
    manager: ResearchManager | None = getattr(request.app.state, "research", None)
    if manager is None:
        raise ResearchUnavailable("Deep research is not available on this server.")
    return manager.for_(who)


ManagerDep = Annotated[OwnedRuns, Depends(get_manager)]
RunId = Annotated[str, Path(pattern=RUN_ID_PATTERN)]

router = APIRouter(prefix="/v1/research", tags=["research"])


class BadLastEventId(DomainError):
    """Last-Event-ID is not a sequence number."""


def _after(header: str | None, query: int | None) -> int:
    if query is not None:
        return query
    if header is None or not header.strip():
        return -1
    try:
        after = int(header.strip())
    except ValueError:
        after = MAX_EVENT_ID + 1
    if after > MAX_EVENT_ID:
        raise BadLastEventId(
            f"Last-Event-ID must be an event's id (a whole number up to {MAX_EVENT_ID})."
        )
    return max(after, -1)


@router.post("", status_code=202, responses=_PROBLEMS)
async def start(body: ResearchRequest, request: Request, manager: ManagerDep) -> dict[str, Any]:
    """Start a research run; follow it at ``events_url``."""
    await enforce(request, "research")  # per-client rate (429) before the in-flight cap (429)
    runtime: Runtime = request.app.state.runtime
    settings = runtime.deps.settings
    sources = research_sources(body.options.sources, settings)  # 422 when none
    asked = body.options.domains.model_dump() if body.options.domains is not None else None
    query, domains = domains_for(body.query, asked, settings)  # 422 for a bad domain
    record = await manager.create(query, body.mode, body.session_id, sources, domains=domains)
    return {
        "research_id": record.id,
        "status": record.status,
        "events_url": f"/v1/research/{record.id}/events",
    }


@router.get("", responses=_PROBLEMS)
async def list_runs(
    manager: ManagerDep,
    owner: OwnerParam = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    """The caller's research runs, newest first (an admin: ``owner``'s, or ``*`` for all)."""
    records, total = await manager.list_runs(limit, offset, owner)
    return {"runs": [summary(r) for r in records], "total": total, "limit": limit, "offset": offset}


@router.get("/{run_id}", responses=_PROBLEMS)
async def show(run_id: RunId, manager: ManagerDep) -> dict[str, Any]:
    """A run's status and state (the polling fallback to the event stream)."""
    record, state = await manager.record(run_id)
    return view(record, state)


@router.get(
    "/{run_id}/events",
    responses={200: {"content": {"text/event-stream": {}}}, **_PROBLEMS},
    response_class=StreamingResponse,
)
async def events(
    run_id: RunId,
    manager: ManagerDep,
    accept: Annotated[str | None, Header()] = None,
    last_event_id_header: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    last_event_id: Annotated[int | None, Query(ge=-1, le=MAX_EVENT_ID)] = None,
) -> StreamingResponse:
    """The run's events as SSE, after ``Last-Event-ID``; a heartbeat comment when idle."""
    if negotiate(accept) != "sse":
        raise NotAcceptable("The event stream is text/event-stream only.")
    after = _after(last_event_id_header, last_event_id)
    await manager.record(run_id)  # 404 before the stream starts
    heartbeat = manager.heartbeat_s

    async def body() -> AsyncIterator[bytes]:
        async for event in manager.follow(run_id, after, heartbeat):
            yield KEEP_ALIVE if event is None else sse(event.seq, event.type, event.data)

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post("/{run_id}/continue", responses=_PROBLEMS)
async def continue_run(
    run_id: RunId, manager: ManagerDep, body: ContinueRequest | None = None
) -> dict[str, Any]:
    """End the plan review now (with edited dimensions, if given)."""
    record, state = await manager.continue_(run_id, body.dimensions if body else None)
    return view(record, state)


@router.post("/{run_id}/resume", status_code=202, responses=_PROBLEMS)
async def resume(
    run_id: RunId, manager: ManagerDep, body: EmptyRequest | None = None
) -> dict[str, Any]:
    """Restart an interrupted or failed run from its last completed phase."""
    record, state = await manager.resume(run_id)
    return view(record, state)


@router.delete("/{run_id}", responses=_PROBLEMS)
async def cancel(run_id: RunId, manager: ManagerDep) -> JSONResponse:
    """Cancel a running run; the partial report and findings are kept."""
    record, state = await manager.cancel(run_id)
    return JSONResponse(view(record, state))


@router.get("/{run_id}/report.md", responses={200: {"content": {"text/markdown": {}}}, **_PROBLEMS})
async def report(run_id: RunId, manager: ManagerDep) -> Response:
    """The report so far as Markdown."""
    record, state = await manager.record(run_id)
    return Response(
        report_markdown(record, state),
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="research-{run_id}.md"'},
    )
