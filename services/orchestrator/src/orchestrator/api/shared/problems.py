"""RFC 7807 problem responses, the exception handlers that make them, and the body guard.

The HTTP edge of the domain errors: ``HTTP_STATUS`` is the one table from an error's kind to
its status (the OpenAI-compatible face uses it too, with its own error object).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any, cast

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.core.errors import DomainError, ErrorKind

logger = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    408: "Request timeout",
    413: "Request body too large",
    409: "Conflict",
    415: "Unsupported media type",
    422: "Invalid request",
    429: "Too many requests",
    431: "Request head too large",
    500: "Internal error",
    503: "Service unavailable",
}


#: Every domain error kind's HTTP status. A kind missing here fails the unit test that walks
#: ``ErrorKind``, so a new kind cannot reach a client as a 500.
HTTP_STATUS: dict[ErrorKind, int] = {
    ErrorKind.MALFORMED: 400,
    ErrorKind.UNAUTHENTICATED: 401,
    ErrorKind.FORBIDDEN: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.NOT_ACCEPTABLE: 406,
    ErrorKind.CONFLICT: 409,
    ErrorKind.TOO_LARGE: 413,
    ErrorKind.UNSUPPORTED: 415,
    ErrorKind.INVALID: 422,
    ErrorKind.RATE_LIMITED: 429,
    ErrorKind.UNAVAILABLE: 503,
}
#: The OpenAI error object's ``type`` per kind (what its SDKs switch on); the rest are
#: ``invalid_request_error``.
_OPENAI_TYPE = {
    ErrorKind.UNAUTHENTICATED: "authentication_error",
    ErrorKind.FORBIDDEN: "permission_error",
    ErrorKind.RATE_LIMITED: "rate_limit_error",
    ErrorKind.UNAVAILABLE: "server_error",
}
#: OpenAI's own ``code`` where it has one for a kind (its SDKs and clients match on it); other
#: errors carry their own code, or their kind.
_OPENAI_CODE = {ErrorKind.RATE_LIMITED: "rate_limit_exceeded"}


def problem_body(
    status: int, detail: str, *, instance: str | None = None, title: str | None = None, **extra: Any
) -> bytes:
    """The JSON bytes of one problem."""
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": title or _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
    }
    if instance is not None:
        body["instance"] = instance
    body.update(extra)
    return orjson.dumps(body)


def problem(
    status: int, detail: str, *, instance: str | None = None, title: str | None = None, **extra: Any
) -> Response:
    """An ``application/problem+json`` response."""
    body = problem_body(status, detail, instance=instance, title=title, **extra)
    return Response(body, status_code=status, media_type=PROBLEM_JSON)


def domain_problem(err: DomainError, *, instance: str | None = None) -> Response:
    """The problem+json response for a domain error (status from ``HTTP_STATUS``)."""
    extra = {"code": err.code} if err.code else {}
    response = problem(
        HTTP_STATUS[err.kind], err.detail, instance=instance, title=err.title, **extra
    )
    if err.retry_after_s is not None:
        response.headers["Retry-After"] = str(err.retry_after_s)
    return response


def openai_problem(status: int, detail: str, code: str, kind: str) -> Response:
    """A problem that also carries OpenAI's ``error`` object, which its SDKs read."""
    return problem(status, detail, error={"message": detail, "type": kind, "code": code})


def openai_problem_for(err: DomainError) -> Response:
    """A domain error as the OpenAI-compatible face answers it."""
    kind = _OPENAI_TYPE.get(err.kind, "invalid_request_error")
    code = err.code or _OPENAI_CODE.get(err.kind, err.kind.value)
    response = openai_problem(HTTP_STATUS[err.kind], err.detail, code, kind)
    if err.retry_after_s is not None:
        response.headers["Retry-After"] = str(err.retry_after_s)
    return response


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


async def _on_validation(request: Request, exc: Exception) -> Response:
    errors = cast(RequestValidationError, exc).errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return problem(400, "The request body is not valid JSON.", instance=request.url.path)
    details = [
        {"field": _field(tuple(e.get("loc", ()))), "message": e.get("msg", "")} for e in errors
    ]
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details)
    return problem(422, summary, instance=request.url.path, errors=details)


async def _on_domain_error(request: Request, exc: Exception) -> Response:
    return domain_problem(cast(DomainError, exc), instance=request.url.path)


async def _on_http(request: Request, exc: Exception) -> Response:
    err = cast(StarletteHTTPException, exc)
    detail = {
        404: f"There is no resource at {request.url.path}.",
        405: f"{request.method} is not allowed on {request.url.path}.",
    }.get(err.status_code, str(err.detail))
    response = problem(err.status_code, detail, instance=request.url.path)
    if err.headers:
        response.headers.update(err.headers)
    return response


async def _on_unexpected(request: Request, exc: Exception) -> Response:
    # Details go to the log only; the caller learns nothing about the internals.
    logger.error("unhandled error", exc_info=exc, extra={"path": request.url.path})
    return problem(500, "The server failed to handle the request.", instance=request.url.path)


def install_problem_handlers(app: FastAPI) -> None:
    """Make every error response an RFC 7807 problem; never a traceback."""
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(DomainError, _on_domain_error)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(Exception, _on_unexpected)


class _TooLarge(Exception):
    pass


class BodyGuard:
    """ASGI middleware: refuse bodies over ``max_bytes`` (413) and non-JSON bodies (415).

    The declared Content-Length is checked before anything is read; streamed (chunked) bodies
    are counted as they arrive, so an oversized body is never handed to the JSON parser.
    """

    def __init__(
        self, app: ASGIApp, *, max_bytes: int, exempt: frozenset[str] = frozenset()
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # Routes that bound and parse their own bodies (uploads: multipart, streamed to disk).
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ("POST", "PUT", "PATCH")
            or scope.get("path") in self.exempt
        ):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope.get("path", "")
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send, 413, self._too_large(), path)
            return
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json" and not ctype.endswith("+json"):
            detail = f"Send the body as application/json (got {ctype or 'no content type'})."
            await self._refuse(send, 415, detail, path)
            return
        await self._guarded(scope, receive, send, path)

    def _too_large(self) -> str:
        return f"The request body is larger than {self.max_bytes} bytes."

    async def _guarded(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        seen = 0
        too_large = False
        started = False

        async def counting_receive() -> Message:
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    too_large = True
                    raise _TooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if too_large:
                return  # the app's own error response for the aborted read is replaced below
            started = started or message["type"] == "http.response.start"
            await send(message)

        with contextlib.suppress(_TooLarge):
            await self.app(scope, counting_receive, guarded_send)
        if too_large and not started:
            await self._refuse(send, 413, self._too_large(), path)

    @staticmethod
    async def _refuse(send: Send, status: int, detail: str, path: str) -> None:
        await send_problem(send, status, detail, path, [(b"connection", b"close")])


async def send_problem(
    send: Send,
    status: int,
    detail: str,
    path: str,
    headers: Sequence[tuple[bytes, bytes]] = (),
    *,
    title: str | None = None,
) -> None:
    """A problem+json response sent on a raw ASGI ``send`` (middleware that answers before
    any route does), with ``headers`` added."""
    body = problem_body(status, detail, instance=path, title=title)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
