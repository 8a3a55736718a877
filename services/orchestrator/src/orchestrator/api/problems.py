"""RFC 7807 problem responses, the exception handlers that make them, and the body guard."""

from __future__ import annotations

import contextlib
import logging
from typing import Any, cast

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.errors import ApiProblem

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


async def _on_api_problem(request: Request, exc: Exception) -> Response:
    err = cast(ApiProblem, exc)
    code = getattr(err, "code", None)  # a machine-readable reason, where the problem has one
    extra = {"code": code} if isinstance(code, str) else {}
    response = problem(err.status, err.detail, instance=request.url.path, title=err.title, **extra)
    response.headers.update(getattr(err, "headers", None) or {})  # e.g. 429's Retry-After
    return response


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
    app.add_exception_handler(ApiProblem, _on_api_problem)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(Exception, _on_unexpected)


class _TooLarge(Exception):
    pass


class BodyGuard:
    """ASGI middleware: refuse bodies over ``max_bytes`` (413) and non-JSON bodies (415).

    The declared Content-Length is checked before anything is read; streamed (chunked) bodies
    are counted as they arrive, so an oversized body is never handed to the JSON parser.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
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
        body = problem_body(status, detail, instance=path)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", PROBLEM_JSON.encode()),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
