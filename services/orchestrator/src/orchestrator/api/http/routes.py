"""HTTP routes of API v1: search (SSE / NDJSON / JSON) and sessions.

Sessions are the caller's own (orchestrator/core/principals.py): addressed by owner and id, so
another principal's session is "not found". An admin names an owner with ``?owner=``.
"""

from __future__ import annotations

import logging
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from orchestrator.adapters.corpus.documents import pinned
from orchestrator.api.http.models import (
    MAX_OFFSET,
    MAX_PAGE,
    SESSION_ID_PATTERN,
    Problem,
    SearchRequest,
    SearchResult,
    SessionPage,
    SessionPatch,
    SessionView,
)
from orchestrator.api.shared.deps import PrincipalDep, RuntimeDep
from orchestrator.api.shared.ratelimit import enforce
from orchestrator.api.shared.streaming import EventStreamResponse, drive
from orchestrator.core.ask.memory import fit
from orchestrator.core.ask.service import Conversation, Question, ask, prepare
from orchestrator.core.errors import InvalidEdit, NotAcceptable, SessionNotFound
from orchestrator.core.events import Event, EventSink, ResultCollector
from orchestrator.core.principals import NotVisible, Principal, acting_owner, listed_owner
from orchestrator.core.sessions import Session
from orchestrator.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

Format = Literal["sse", "ndjson", "json"]
_ACCEPT: dict[str, Format] = {
    "text/event-stream": "sse",
    "application/x-ndjson": "ndjson",
    "application/json": "json",
    "*/*": "sse",
    "text/*": "sse",
    "application/*": "json",
}
_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "content": {"application/problem+json": {}}}
    for code in (400, 401, 404, 406, 413, 415, 422, 429)
}


SessionId = Annotated[str, Path(pattern=SESSION_ID_PATTERN)]
#: ``?owner=``: whose data an admin means (``*``: everyone's, in lists); others may omit it.
OwnerParam = Annotated[str | None, Query(min_length=1, max_length=100)]


def _owner(who: Principal, asked: str | None, session_id: str) -> str:
    try:
        return acting_owner(who, asked)
    except NotVisible:
        raise SessionNotFound(f"No session {session_id!r} (it may have expired).") from None


def negotiate(accept: str | None) -> Format:
    """Pick the representation from the Accept header (SSE when absent).

    Raises:
        NotAcceptable: no listed media type is one the API produces.
    """
    if not accept or not accept.strip():
        return "sse"
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in _ACCEPT:
            return _ACCEPT[media]
    raise NotAcceptable(
        "Accept text/event-stream (default), application/x-ndjson or application/json."
    )


router = APIRouter(prefix="/v1", tags=["v1"])


@router.post(
    "/search",
    response_model=SearchResult,
    responses={
        200: {
            "description": "An event stream (SSE by default, NDJSON on request) or, with "
            "`Accept: application/json`, the final result. Events: see docs/api.md.",
            "content": {"text/event-stream": {}, "application/x-ndjson": {}},
        },
        **_PROBLEMS,
    },
)
async def search(
    body: SearchRequest,
    request: Request,
    runtime: RuntimeDep,
    who: PrincipalDep,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """Answer a question: plan, search, read, judge, and stream a cited answer."""
    fmt = negotiate(accept)
    notice = await enforce(request, "questions")
    session_id = body.session_id or uuid.uuid4().hex
    run_id = uuid.uuid4().hex
    asked = body.options.domains.model_dump() if body.options.domains is not None else None
    searched, options = prepare(body.query, body.options, runtime.deps.settings, asked)
    options = await pinned(
        options,
        runtime.corpus.documents if runtime.corpus is not None else None,
        who,
        body.options.scope,
        body.options.sources,
    )
    edit = await _edit_index(runtime, body, who.id)
    talk = Conversation.kept(session_id, edit=edit)
    question = Question(searched, who.id, run_id, options, talk, typed=body.query)

    async def run(sink: EventSink) -> None:
        if notice is not None:
            sink.warn_after_start(notice.code, notice.message)
        await ask(runtime.deps, runtime.sessions, sink, question)

    if fmt != "json":
        return EventStreamResponse(run, fmt, keepalive_s=runtime.deps.settings.keepalive_s)
    collector = ResultCollector()

    async def on_event(event: Event) -> None:
        collector.add(event)

    await drive(run, request.receive, on_event)
    return JSONResponse(collector.result)


async def _edit_index(runtime: Runtime, body: SearchRequest, owner: str) -> int | None:
    """The 0-based index of the turn ``edit_turn`` re-asks (checked before the run starts).

    Raises:
        InvalidEdit: no session_id, no such session, or no such turn.
    """
    if body.edit_turn is None:
        return None
    if body.session_id is None:
        raise InvalidEdit("edit_turn needs the session_id of the conversation to edit.")
    session = await runtime.sessions.get(owner, body.session_id)
    count = len(session.turns) if session is not None else 0
    if body.edit_turn > count:
        raise InvalidEdit(
            f"Session {body.session_id!r} has {count} turn(s); edit_turn must be 1 to {count}."
        )
    return body.edit_turn - 1


@router.get("/sessions", response_model=SessionPage, responses=_PROBLEMS)
async def list_sessions(
    runtime: RuntimeDep,
    who: PrincipalDep,
    owner: OwnerParam = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
) -> dict[str, Any]:
    """The caller's conversations, newest first: title (the first question, or the rename) and
    type. An admin may ask for ``owner``'s, or ``*`` for everyone's."""
    try:
        shown = listed_owner(who, owner)
    except NotVisible:
        raise SessionNotFound(f"No sessions of owner {owner!r}.") from None
    sessions, total = await runtime.sessions.page(shown, offset, limit)
    return {"sessions": sessions, "total": total, "offset": offset, "limit": limit}


@router.get("/sessions/{session_id}", response_model=SessionView, responses=_PROBLEMS)
async def get_session(
    session_id: SessionId, runtime: RuntimeDep, who: PrincipalDep, owner: OwnerParam = None
) -> dict[str, Any]:
    """A conversation: its questions, answers and sources."""
    session = await runtime.sessions.get(_owner(who, owner, session_id), session_id)
    if session is None:
        raise SessionNotFound(f"No session {session_id!r} (it may have expired).")
    return view(runtime, session)


@router.patch("/sessions/{session_id}", response_model=SessionView, responses=_PROBLEMS)
async def rename_session(
    session_id: SessionId,
    body: SessionPatch,
    runtime: RuntimeDep,
    who: PrincipalDep,
    owner: OwnerParam = None,
) -> dict[str, Any]:
    """Rename a conversation."""
    title = body.title.strip() or body.title
    session = await runtime.sessions.rename(_owner(who, owner, session_id), session_id, title)
    if session is None:
        raise SessionNotFound(f"No session {session_id!r} (it may have expired).")
    return view(runtime, session)


def view(runtime: Runtime, session: Session) -> dict[str, Any]:
    """A session as the API shows it, with its memory meter: how much of it the next question
    carries (core/ask/memory.py's budget) and how much the store keeps."""
    memory = fit(session.turns, runtime.deps.settings.history_budget_chars()).event()
    stored = {"stored_chars": session.chars, "stored_budget": runtime.sessions.max_chars}
    return {**session.to_json(), "memory": {**memory, **stored}}


@router.delete("/sessions/{session_id}", status_code=204, responses=_PROBLEMS)
async def delete_session(
    session_id: SessionId, runtime: RuntimeDep, who: PrincipalDep, owner: OwnerParam = None
) -> Response:
    """Forget a conversation."""
    if not await runtime.sessions.delete(_owner(who, owner, session_id), session_id):
        raise SessionNotFound(f"No session {session_id!r} (it may have expired).")
    return Response(status_code=204)
