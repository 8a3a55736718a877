"""A stand-in for the Brave Search API over real HTTP: ``GET /res/v1/web/search`` answered in
Brave's JSON shape with its rate-limit headers (per second, then per month).

Usage::

    async with FakeBrave(results=[brave_result("https://a.test/", "A", "about a")]) as brave:
        ... BraveClient(key, http, base_url=brave.url, timeout=5) ...
        brave.monthly_remaining = 0      # the next search answers 429, quota spent
        assert brave.queries == ["first query"]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer

KEY = "test-brave-key"


def brave_result(url: str, title: str, description: str = "", *, age: str = "") -> dict[str, Any]:
    """One web result as Brave's API has it (query words marked with <strong>)."""
    item: dict[str, Any] = {
        "type": "search_result",
        "title": title,
        "url": url,
        "description": description,
        "is_source_local": False,
        "is_source_both": False,
        "language": "en",
        "family_friendly": True,
        "profile": {"name": title, "url": url, "long_name": url},
        "meta_url": {"scheme": "https", "netloc": url.split("/")[2], "path": ""},
    }
    if age:
        item["page_age"] = age
        item["age"] = age
    return item


class FakeBrave:
    """The stand-in; an async context manager. ``url`` is the API's base URL."""

    def __init__(self, results: Sequence[dict[str, Any]] = (), *, key: str = KEY) -> None:
        self.results = list(results)
        self.key = key
        self.per_second = 1
        self.monthly_limit = 2000
        self.monthly_remaining = 1999
        self.monthly_reset_s = 1_296_000
        self.requests: list[Request] = []
        self._server = TinyHTTPServer(self._handle)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123``."""
        return self._server.url

    @property
    def queries(self) -> list[str]:
        """The ``q`` of each search."""
        return [r.query.get("q", "") for r in self.requests]

    async def __aenter__(self) -> FakeBrave:
        await self._server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._server.stop()

    def _headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": f"{self.per_second}, {self.monthly_limit}",
            "X-RateLimit-Policy": f"{self.per_second};w=1, {self.monthly_limit};w=2592000",
            "X-RateLimit-Remaining": f"{self.per_second - 1}, {max(0, self.monthly_remaining)}",
            "X-RateLimit-Reset": f"1, {self.monthly_reset_s}",
        }

    async def _handle(self, request: Request) -> Response:
        if request.path != "/res/v1/web/search":
            return Response.json({"type": "ErrorResponse", "error": {"code": "NOT_FOUND"}}, 404)
        self.requests.append(request)
        if request.headers.get("x-subscription-token") != self.key:
            error = {"code": "SUBSCRIPTION_TOKEN_INVALID", "status": 401, "detail": "bad token"}
            return Response.json({"type": "ErrorResponse", "error": error}, 401)
        if self.monthly_remaining <= 0:
            error = {"code": "RATE_LIMITED", "status": 429, "detail": "quota exceeded"}
            reply = Response.json({"type": "ErrorResponse", "error": error}, 429)
            reply.headers.update(self._headers())
            return reply
        self.monthly_remaining -= 1
        body = {
            "type": "search",
            "query": {"original": request.query.get("q", ""), "more_results_available": False},
            "mixed": {"type": "mixed", "main": []},
            "web": {"type": "search", "results": self.results, "family_friendly": True},
        }
        reply = Response.json(body)
        reply.headers.update(self._headers())
        return reply
