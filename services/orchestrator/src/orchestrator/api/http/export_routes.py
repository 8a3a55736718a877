"""HTTP routes of exports and run bundles (docs/exports.md):

- ``GET /v1/research/{id}/export?format=md|html|pdf|json|bibtex|ris`` and ``/bundle``;
- ``GET /v1/sessions/{id}/export?format=…[&turn=N]`` (one answer with ``turn``) and ``/bundle``.

The owner checks are the existing routes': runs through ``OwnedRuns`` bound to the caller,
sessions by (owner, id), so another principal's run or session is a 404 like a missing one.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from orchestrator.adapters.exports.pdf import PdfRenderer
from orchestrator.adapters.exports.render import FORMATS, ExportFormat, TurnNotFound, export
from orchestrator.api.http.models import Problem
from orchestrator.api.http.research_routes import ManagerDep, RunId
from orchestrator.api.http.routes import OwnerParam, SessionId
from orchestrator.api.shared.deps import PrincipalDep, RuntimeDep
from orchestrator.config import Settings
from orchestrator.core.errors import ResearchConflict, SessionNotFound
from orchestrator.core.exports.bundle import research_bundle, session_bundle
from orchestrator.core.exports.document import Document, from_research, from_session
from orchestrator.core.principals import NotVisible, Principal, acting_owner
from orchestrator.core.research.views import report_markdown
from orchestrator.core.sessions import Session
from orchestrator.wiring.runtime import Runtime

MAX_TURN = 10_000
_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "content": {"application/problem+json": {}}}
    for code in (400, 401, 404, 409, 422, 429, 503)
}
_FILE: dict[int | str, dict[str, Any]] = {
    200: {"content": {m.media_type.split(";")[0]: {} for m in FORMATS.values()}}
}
FormatParam = Annotated[ExportFormat, Query(description="md, html, pdf, json, bibtex or ris")]
TurnParam = Annotated[int | None, Query(ge=1, le=MAX_TURN, description="one answer (1-based)")]

router = APIRouter(tags=["exports"])


def _renderer(request: Request) -> PdfRenderer:
    # One per app, made on first use: its semaphore keeps to one Chromium at a time.
    renderer: PdfRenderer | None = getattr(request.app.state, "pdf_renderer", None)
    if renderer is None:
        settings: Settings = request.app.state.runtime.deps.settings
        renderer = PdfRenderer(settings.export_chromium, settings.export_pdf_timeout_s)
        request.app.state.pdf_renderer = renderer
    return renderer


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.runtime.deps.settings
    return settings


def _attachment(body: bytes, media_type: str, filename: str) -> Response:
    return Response(
        body,
        media_type=media_type,
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        },
    )


async def _file(request: Request, doc: Document, fmt: str, stem: str) -> Response:
    body = await export(doc, fmt, _renderer(request))
    spec = FORMATS[fmt]
    return _attachment(body, spec.media_type, f"{stem}.{spec.extension}")


@router.get("/v1/research/{run_id}/export", responses={**_FILE, **_PROBLEMS})
async def export_research(
    run_id: RunId, request: Request, manager: ManagerDep, format: FormatParam = "md"
) -> Response:
    """The report (so far) as a file: Markdown, HTML, PDF, JSON, or its sources as BibTeX/RIS."""
    record, state = await manager.record(run_id)
    doc = from_research(record, state, report_markdown(record, state))
    return await _file(request, doc, format, f"research-{run_id}")


@router.get(
    "/v1/research/{run_id}/bundle",
    responses={200: {"content": {"application/zip": {}}}, **_PROBLEMS},
)
async def bundle_research(run_id: RunId, request: Request, manager: ManagerDep) -> Response:
    """Everything the run did, as one zip file (``quarry replay`` replays it offline)."""
    record, state = await manager.record(run_id)
    if record.status == "running":
        raise ResearchConflict("The run is running; its bundle is made when it ends.")
    events = [e async for e in manager.follow(run_id, -1, manager.heartbeat_s) if e is not None]
    doc = from_research(record, state, report_markdown(record, state))
    body = research_bundle(record, state, events, doc, _settings(request))
    return _attachment(body, "application/zip", f"research-{run_id}.bundle.zip")


async def _session(runtime: Runtime, who: Principal, owner: str | None, session_id: str) -> Session:
    try:
        acting = acting_owner(who, owner)
    except NotVisible:
        raise SessionNotFound(f"No session {session_id!r} (it may have expired).") from None
    session = await runtime.sessions.get(acting, session_id)
    if session is None:
        raise SessionNotFound(f"No session {session_id!r} (it may have expired).")
    return session


@router.get("/v1/sessions/{session_id}/export", responses={**_FILE, **_PROBLEMS})
async def export_session(
    session_id: SessionId,
    request: Request,
    runtime: RuntimeDep,
    who: PrincipalDep,
    format: FormatParam = "md",
    turn: TurnParam = None,
    owner: OwnerParam = None,
) -> Response:
    """The conversation (or, with ``turn``, one answer) as a file."""
    session = await _session(runtime, who, owner, session_id)
    try:
        doc = from_session(session, turn)
    except IndexError:
        raise TurnNotFound(f"The session has {len(session.turns)} turns; no turn {turn}.") from None
    stem = f"session-{session_id}" + (f"-turn-{turn}" if turn else "")
    return await _file(request, doc, format, stem)


@router.get(
    "/v1/sessions/{session_id}/bundle",
    responses={200: {"content": {"application/zip": {}}}, **_PROBLEMS},
)
async def bundle_session(
    session_id: SessionId,
    request: Request,
    runtime: RuntimeDep,
    who: PrincipalDep,
    owner: OwnerParam = None,
) -> Response:
    """The conversation as a bundle: its turns, answers, sources and passages."""
    session = await _session(runtime, who, owner, session_id)
    doc = from_session(session)
    body = session_bundle(session, doc, _settings(request))
    stamp = time.strftime("%Y%m%d", time.gmtime(session.created))
    return _attachment(body, "application/zip", f"session-{session_id}-{stamp}.bundle.zip")
