"""A fake SearXNG over real HTTP that answers ``/search?format=json`` in SearXNG's real shape.

Usage::

    async with FakeSearxng(results=[searx_result("https://a.test/", "A", "about a")]) as sx:
        ... SearxngClient(sx.url, http) ...
        sx.fail_next("hang", "500")          # the next two searches misbehave, then normal
        sx.unresponsive = [("brave", "timeout")]
        assert sx.queries == ["first query"]

``results`` is a list of result dicts (see ``searx_result``) or a function of the query that
returns one; ``mode`` sets the behaviour of every search: ``ok``, ``403`` (JSON output disabled),
``429`` (its limiter), ``500``, ``hang`` (no answer until the client gives up) or ``drop``
(connection cut).
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

import pytest

from services.orchestrator.tests.fakes._http import (
    DropConnection,
    Request,
    Response,
    StreamResponse,
    TinyHTTPServer,
)

Mode = Literal["ok", "403", "429", "500", "hang", "drop"]
Results = Sequence[dict[str, Any]] | Callable[[str], Sequence[dict[str, Any]]]

# SearXNG's own 403 page when the requested format is not in search.formats.
_FORBIDDEN_HTML = b"<!doctype html><title>403 Forbidden</title><h1>Forbidden</h1>"


def searx_result(
    url: str,
    title: str,
    content: str = "",
    *,
    engine: str = "duckduckgo",
    engines: Sequence[str] | None = None,
    score: float = 1.0,
    published: str | None = None,
    category: str = "general",
) -> dict[str, Any]:
    """One result object exactly as SearXNG's JSON output has it."""
    parts = urlsplit(url)
    return {
        "url": url,
        "title": title,
        "content": content,
        "engine": engine,
        "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, parts.fragment],
        "template": "default.html",
        "engines": list(engines or [engine]),
        "positions": [1],
        "score": score,
        "category": category,
        "publishedDate": published,
        "thumbnail": "",
        "priority": "",
    }


def default_results(query: str) -> list[dict[str, Any]]:
    """Three results whose text mentions the query."""
    slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-") or "q"
    return [
        searx_result(
            f"https://example.com/{slug}/{i}", f"Result {i} for {query}", f"About {query} ({i})."
        )
        for i in (1, 2, 3)
    ]


class FakeSearxng:
    """The fake server; an async context manager. ``url`` is SearXNG's base URL."""

    def __init__(self, results: Results | None = None, *, mode: Mode = "ok") -> None:
        self.results: Results = results if results is not None else default_results
        self.mode: Mode = mode
        self.unresponsive: list[tuple[str, str]] = []
        self.suggestions: list[str] = []
        self.healthy = True
        self.requests: list[Request] = []
        self.disconnects = 0
        self._next: deque[Mode] = deque()
        self._closing = asyncio.Event()
        self._server = TinyHTTPServer(self._handle, self._on_disconnect)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123``."""
        return self._server.url

    @property
    def searches(self) -> list[Request]:
        """The ``/search`` requests, in arrival order."""
        return [r for r in self.requests if r.path == "/search"]

    @property
    def queries(self) -> list[str]:
        """The ``q`` of each search."""
        return [r.query.get("q", "") for r in self.searches]

    def fail_next(self, *modes: Mode) -> None:
        """Use ``modes`` for the next searches, one each, then ``mode`` again."""
        self._next.extend(modes)

    async def __aenter__(self) -> FakeSearxng:
        await self._server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing.set()
        await self._server.stop()

    def _on_disconnect(self, request: Request) -> None:
        self.disconnects += 1

    async def _handle(self, request: Request) -> Response | StreamResponse:
        self.requests.append(request)
        if request.path == "/healthz":
            return Response(200 if self.healthy else 503, b"OK", "text/plain")
        if request.path == "/":
            return Response(200, b"<!doctype html><title>SearXNG</title>", "text/html")
        if request.path != "/search":
            return Response(404, b"Not Found", "text/plain")
        mode = self._next.popleft() if self._next else self.mode
        if mode == "hang":
            await self._closing.wait()
            return Response(503, b"closing", "text/plain")
        if mode == "drop":
            raise DropConnection
        if mode == "500":
            return Response(500, b"Internal Server Error", "text/html")
        if mode == "429":  # SearXNG's limiter answers a plain page, no Retry-After
            return Response(429, b"Too Many Requests", "text/plain")
        if mode == "403" or request.query.get("format") != "json":
            return Response(403, _FORBIDDEN_HTML, "text/html")
        return Response.json(self._page(request.query.get("q", "")))

    def _page(self, query: str) -> dict[str, Any]:
        results = self.results(query) if callable(self.results) else self.results
        return {
            "query": query,
            "number_of_results": 0,
            "results": list(results),
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": list(self.suggestions),
            "unresponsive_engines": [[name, reason] for name, reason in self.unresponsive],
        }


@pytest.fixture
async def fake_searxng() -> AsyncIterator[FakeSearxng]:
    """A running FakeSearxng with the default results."""
    async with FakeSearxng() as fake:
        yield fake


__all__ = ["FakeSearxng", "default_results", "fake_searxng", "searx_result"]
