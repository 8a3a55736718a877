"""Serve the web UI: ``/`` is the page, ``/ui/*`` its static files (nothing from elsewhere)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

# The page loads only its own files; model and web text is sanitised by DOMPurify, and this
# policy is the second wall: no inline script, no remote image (a tracking pixel in a web page's
# excerpt must not call home), no framing.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_STATIC_HEADERS = [(k.lower().encode(), v.encode()) for k, v in _PAGE_HEADERS.items()]


def is_public_path(path: str) -> bool:
    """The page and its files: no API data, so they load without a token (the page then asks
    for one and sends it with every API call)."""
    return path == "/" or path.startswith("/ui/")


def static_dir() -> Path:
    """Where the UI's files are (inside the installed package)."""
    return Path(str(files("orchestrator.api.web") / "static"))


class _Static(StaticFiles):
    """StaticFiles that revalidates (files change with the server) and forbids sniffing."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: dict[str, object]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))  # type: ignore[call-overload]
                headers += _STATIC_HEADERS
                message = {**message, "headers": headers}
            await send(message)

        await super().__call__(scope, receive, send_with_headers)  # type: ignore[arg-type]


def install_ui(app: FastAPI) -> None:
    """Add the page at ``/`` and its files under ``/ui``."""
    root = static_dir()
    index = root / "index.html"

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(index, media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)

    app.mount("/ui", _Static(directory=root), name="ui")
