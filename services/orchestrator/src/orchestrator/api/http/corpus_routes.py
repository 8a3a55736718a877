"""HTTP routes for local documents: corpus stats and a refresh that streams its progress."""

from __future__ import annotations

import asyncio
from asyncio import FIRST_COMPLETED
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.adapters.corpus.indexer import Counts, RefreshResult
from orchestrator.adapters.corpus.service import CorpusService, CorpusUnavailable
from orchestrator.adapters.corpus.uploads import UploadsOff, UploadTooLarge
from orchestrator.api.http.models import MAX_OFFSET, MAX_PAGE, Problem
from orchestrator.api.http.routes import negotiate
from orchestrator.api.http.upload_stream import OVERHEAD_BYTES, boundary_of, receive_files
from orchestrator.api.shared.deps import PrincipalDep, get_runtime
from orchestrator.api.shared.ratelimit import enforce
from orchestrator.api.shared.sse import KEEP_ALIVE, StreamFormat, frame
from orchestrator.core.errors import DomainError
from orchestrator.wiring.runtime import Runtime

#: Routes that read their own (multipart) bodies, past the JSON body guard.
UPLOAD_PATHS = frozenset({"/v1/corpus/files"})

_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "content": {"application/problem+json": {}}}
    for code in (400, 401, 403, 404, 406, 409, 413, 415, 422, 429, 503)
}

router = APIRouter(prefix="/v1", tags=["corpus"])


class RefreshRequest(BaseModel):
    """POST /v1/corpus/refresh."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None,
        max_length=4096,
        description="absolute folder on the server; absent: CORPUS_DIR. Outside CORPUS_DIR "
        "and ORCHESTRATOR_CORPUS_ROOTS only with allow_outside (and a server that allows it)",
    )
    allow_outside: bool = Field(
        default=False,
        description="the user agreed to index a folder outside the corpus roots; honoured only "
        "with ORCHESTRATOR_CORPUS_ALLOW_OUTSIDE=true",
    )


class CorpusView(BaseModel):
    """GET /v1/corpus."""

    corpus_dir: str | None
    roots: list[str]
    documents: int
    chunks: int
    embedded: int | None
    pending: int | None
    committed_at: str | None
    refreshing: bool
    last_refresh: dict[str, Any] | None


def _service(request: Request) -> CorpusService:
    runtime: Runtime = get_runtime(request)
    if runtime.corpus is None:
        raise CorpusUnavailable("Local documents are not wired in this server.")
    return runtime.corpus


ServiceDep = Annotated[CorpusService, Depends(_service)]


@router.get("/corpus", response_model=CorpusView, responses=_PROBLEMS)
async def corpus_stats(service: ServiceDep) -> dict[str, Any]:
    """The indexed documents: counts, the last commit and how the last refresh went."""
    return await service.stats()


def _final(result: RefreshResult) -> dict[str, Any]:
    stats = result.stats
    return {
        **result.as_dict(),
        "documents": stats.documents if stats else None,
        "chunks": stats.chunks if stats else None,
        "embedded": stats.embedded if stats else None,
        "committed_at": stats.committed_at if stats else None,
    }


async def _stream(
    service: CorpusService, folder: str, fmt: StreamFormat, keepalive_s: float
) -> AsyncIterator[bytes]:
    latest: list[dict[str, int]] = []
    changed = asyncio.Event()

    def on_progress(counts: Counts) -> None:
        # Coalesced: a slow client sees the newest counts, not a backlog of every file.
        latest[:] = [counts.as_dict()]
        changed.set()

    seq = 0
    queued = service.busy
    task = service.start_refresh(folder, on_progress)
    yield frame(fmt, seq, "refresh.started", {"root": folder, "queued": queued})
    while not task.done():
        waiter = asyncio.ensure_future(changed.wait())
        await asyncio.wait([waiter, task], timeout=keepalive_s, return_when=FIRST_COMPLETED)
        waiter.cancel()
        if not changed.is_set() and not task.done() and fmt == "sse":
            # A large file can take minutes: proxies see traffic and keep the stream open.
            yield KEEP_ALIVE
        if changed.is_set() and latest:
            changed.clear()
            seq += 1
            yield frame(fmt, seq, "progress", latest[0])
    seq += 1
    try:
        result = task.result()
    except DomainError as err:
        yield frame(fmt, seq, "error", {"code": "corpus_unavailable", "message": err.detail})
        return
    yield frame(fmt, seq, "refresh.completed", _final(result))


@router.post(
    "/corpus/refresh",
    responses={
        200: {
            "description": "Progress as an event stream (SSE by default, NDJSON on request) or, "
            "with `Accept: application/json`, the final counts. A refresh already running is "
            "waited for (one at a time). Events: see docs/api.md.",
            "content": {"text/event-stream": {}, "application/x-ndjson": {}},
        },
        **_PROBLEMS,
    },
)
async def corpus_refresh(
    body: RefreshRequest,
    request: Request,
    service: ServiceDep,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """Index a folder (CORPUS_DIR by default) incrementally: add, update and remove documents."""
    fmt = negotiate(accept)
    # Counted before the path is looked at: the limit also bounds probing the filesystem.
    await enforce(request, "indexing")
    folder = service.resolve(body.path, allow_outside=body.allow_outside)
    keepalive_s = get_runtime(request).deps.settings.keepalive_s
    if fmt != "json":
        media = "text/event-stream" if fmt == "sse" else "application/x-ndjson"
        return StreamingResponse(
            _stream(service, folder, fmt, keepalive_s),
            media_type=media,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    # Shielded: a client that goes away does not cancel the refresh half-way.
    result = await asyncio.shield(service.start_refresh(folder))
    return JSONResponse(_final(result))


class DocumentItem(BaseModel):
    """One indexed document."""

    id: str = Field(description="the document id (local: + path): its citation URL")
    path: str
    title: str
    type: str = Field(description="html, markdown, text or pdf")
    size: int = Field(description="bytes of the file when indexed")
    passages: int
    pages: int | None = Field(description="PDF pages its passages were cut from")
    indexed_at: str | None
    modified_at: str | None
    uploaded: bool = Field(description="kept in the upload folder: removing it deletes the file")


class DocumentPage(BaseModel):
    """GET /v1/corpus/documents."""

    documents: list[DocumentItem]
    total: int
    offset: int
    limit: int


@router.get("/corpus/documents", response_model=DocumentPage, responses=_PROBLEMS)
async def list_documents(
    service: ServiceDep,
    who: PrincipalDep,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    under: Annotated[
        str | None,
        Query(max_length=4096, description="only this folder or file (a scope, see options)"),
    ] = None,
) -> dict[str, Any]:
    """The documents the caller can see, by path: type, size, passages, when indexed."""
    docs, total = await service.documents.page(who, under=under or "", offset=offset, limit=limit)
    return {"documents": docs, "total": total, "offset": offset, "limit": limit}


@router.delete("/corpus/documents/{doc_id:path}", responses=_PROBLEMS)
async def remove_document(
    doc_id: str, request: Request, service: ServiceDep, who: PrincipalDep
) -> dict[str, Any]:
    """Remove one document from the index (an uploaded one's file too)."""
    await enforce(request, "indexing")
    async with service.exclusive():
        return await service.documents.remove(who, doc_id)


@router.post(
    "/corpus/files",
    status_code=201,
    responses={
        201: {"description": "The files kept and indexed: searchable now."},
        **_PROBLEMS,
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "file": {
                                "type": "array",
                                "items": {"type": "string", "format": "binary"},
                            }
                        },
                    }
                }
            },
        }
    },
)
async def upload_files(request: Request, service: ServiceDep, who: PrincipalDep) -> JSONResponse:
    """Keep PDF, HTML, Markdown or text files in the caller's upload folder and index them.

    All or nothing: one refused file refuses the request and nothing is kept.
    """
    await enforce(request, "indexing")
    uploads = service.uploads
    if uploads is None:
        raise UploadsOff("Uploads are off on this server (ORCHESTRATOR_UPLOAD_DIR is empty).")
    headers = request.headers
    boundary = boundary_of(headers.get("content-type", ""), headers.get("content-encoding", ""))
    max_total = uploads.max_bytes * uploads.max_files + OVERHEAD_BYTES
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_total:
        raise UploadTooLarge(f"The upload is larger than {max_total} bytes.")
    incoming = await asyncio.to_thread(uploads.incoming)
    try:
        await receive_files(request.stream(), boundary, incoming, max_total)
        async with service.exclusive():
            kept = await uploads.keep(who, incoming)
    finally:
        await asyncio.to_thread(incoming.discard)
    return JSONResponse({"files": kept}, status_code=201)
