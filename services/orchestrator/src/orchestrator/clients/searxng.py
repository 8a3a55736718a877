"""SearXNG's JSON search API: ``GET {base}/search?q=…&format=json``."""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from orchestrator.agent.domain import SearchFailed, SearchHit, SearchResponse

logger = logging.getLogger(__name__)

FORBIDDEN = (
    "SearXNG at {url} refused the request with HTTP 403: JSON output is disabled in SearXNG's "
    "settings (search.formats in settings.yml must include json)."
)
RATE_LIMITED = (
    "SearXNG at {url} is rate-limiting this client (HTTP 429); for a private instance, set "
    "server.limiter: false in settings.yml."
)


class SearxngError(SearchFailed):
    """SearXNG could not be reached or refused; the message is safe to show the user."""


class SearxngClient:
    """One SearXNG instance; ``http`` is the shared client (its pool is reused)."""

    def __init__(
        self,
        base_url: str,
        http: httpx.AsyncClient,
        timeout: float = 20.0,
        *,
        retry_backoff_s: float = 0.5,
    ) -> None:
        """``timeout`` bounds each attempt; one retry follows a network error or a 5xx."""
        self.base_url = base_url.rstrip("/").removesuffix("/search")
        self._http = http
        self._timeout = timeout
        self._backoff = retry_backoff_s

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        pageno: int = 1,
    ) -> SearchResponse:
        """One page of results in SearXNG's order, de-duplicated by URL.

        Raises:
            SearxngError: unreachable, too slow, refusing JSON (403) or answering badly; the
                message names SearXNG's URL and is safe to show.
        """
        if not self.base_url:
            raise SearxngError("No SearXNG is configured: set SEARXNG_URL.", "")
        params: dict[str, str | int] = {"q": query, "format": "json", "pageno": pageno}
        for key, value in (
            ("categories", categories),
            ("language", language),
            ("time_range", time_range),
        ):
            if value:
                params[key] = value
        resp = await self._get_with_retry(params)
        try:
            data = resp.json()
        except ValueError:
            raise SearxngError(
                f"SearXNG at {self.base_url} answered with invalid JSON.", self.base_url
            ) from None
        if not isinstance(data, dict):
            raise SearxngError(
                f"SearXNG at {self.base_url} answered with unexpected JSON.", self.base_url
            )
        return parse_response(data)

    async def ping(self, *, timeout: float) -> bool:
        """True when SearXNG answers ``/healthz`` (or ``/`` on versions without it)."""
        if not self.base_url:
            return False
        try:
            async with asyncio.timeout(timeout):
                resp = await self._http.get(f"{self.base_url}/healthz", timeout=timeout)
                if resp.status_code == 404:
                    resp = await self._http.get(f"{self.base_url}/", timeout=timeout)
        except (TimeoutError, httpx.HTTPError) as exc:
            logger.info(
                "SearXNG ping failed", extra={"searxng_url": self.base_url, "error": repr(exc)}
            )
            return False
        return resp.status_code < 400

    async def _get_with_retry(self, params: dict[str, str | int]) -> httpx.Response:
        url = f"{self.base_url}/search"
        for attempt in (1, 2):
            try:
                async with asyncio.timeout(self._timeout):
                    resp = await self._http.get(url, params=params, timeout=self._timeout)
            except (TimeoutError, httpx.ReadTimeout):
                # A full timeout already spent: a retry would double the wait.
                raise SearxngError(
                    f"SearXNG at {self.base_url} did not answer within {self._timeout:g} s.",
                    self.base_url,
                ) from None
            except httpx.TransportError as exc:
                if attempt == 1:
                    await self._pause("network error", repr(exc))
                    continue
                raise SearxngError(
                    f"Cannot reach SearXNG at {self.base_url} ({_reason(exc)}).", self.base_url
                ) from exc
            if resp.status_code >= 500 and attempt == 1:
                await self._pause("server error", f"HTTP {resp.status_code}")
                continue
            _raise_for_status(resp, self.base_url)
            return resp
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _pause(self, what: str, detail: str) -> None:
        logger.warning(
            "SearXNG %s; retrying once",
            what,
            extra={"searxng_url": self.base_url, "error": detail},
        )
        await asyncio.sleep(self._backoff)


def _reason(exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or host unreachable"
    return "the connection broke"


def _raise_for_status(resp: httpx.Response, base_url: str) -> None:
    status = resp.status_code
    if status < 400:
        return
    if status == 403:
        raise SearxngError(FORBIDDEN.format(url=base_url), base_url)
    if status == 429:
        raise SearxngError(RATE_LIMITED.format(url=base_url), base_url)
    raise SearxngError(f"SearXNG at {base_url} answered HTTP {status}.", base_url)


def _url_key(url: str) -> str:
    """The identity of a result URL: scheme and host lower-cased, no fragment or final slash."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def parse_response(data: dict[str, Any]) -> SearchResponse:
    """SearXNG's JSON output → SearchResponse; malformed items are skipped, not fatal."""
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for item in data.get("results") or []:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            continue
        key = _url_key(url)
        if key in seen:
            continue
        seen.add(key)
        engines = item.get("engines") or ([item["engine"]] if item.get("engine") else [])
        score = item.get("score")
        hits.append(
            SearchHit(
                url=url,
                title=" ".join(str(item.get("title") or "").split()),
                snippet=" ".join(str(item.get("content") or "").split()),
                engine_rank=len(hits) + 1,
                engines=tuple(str(e) for e in engines),
                published=str(item.get("publishedDate") or ""),
                score=float(score) if isinstance(score, int | float) else 0.0,
            )
        )
    reasons = _unresponsive(data.get("unresponsive_engines"))
    suggestions = [s for s in data.get("suggestions") or [] if isinstance(s, str)]
    return SearchResponse(
        hits=hits,
        unresponsive_engines=list(dict.fromkeys(name for name, _ in reasons)),
        unresponsive_reasons=reasons,
        suggestions=suggestions,
    )


def _unresponsive(raw: Any) -> list[tuple[str, str]]:
    """``[[name, reason], …]`` (current SearXNG) or plain names (older versions)."""
    out: list[tuple[str, str]] = []
    for entry in raw or []:
        if isinstance(entry, str):
            out.append((entry, ""))
        elif isinstance(entry, list | tuple) and entry:
            out.append((str(entry[0]), str(entry[1]) if len(entry) > 1 else ""))
    return out
