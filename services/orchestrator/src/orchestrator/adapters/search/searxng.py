"""SearXNG's JSON search API: ``GET {base}/search?q=…&format=json``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from orchestrator.core.ask.domain import ErrorKind, SearchFailed, SearchHit, SearchResponse

logger = logging.getLogger(__name__)

FORBIDDEN = (
    "SearXNG at {url} refused the request with HTTP 403: JSON output is disabled. Add json to "
    "the output formats in SearXNG's settings.yml and restart it:\n"
    "search:\n  formats:\n    - html\n    - json"
)
RATE_LIMITED = (
    "SearXNG at {url} is rate-limiting this client (HTTP 429, its limiter); for a private "
    "instance, turn the limiter off in settings.yml:\n"
    "server:\n  limiter: false"
)


class SearxngError(SearchFailed):
    """SearXNG could not be reached or refused; the message is safe to show the user."""


class _Transient(SearxngError):
    """A network error or a 5xx: worth another attempt while the call's budget lasts."""


Sleep = Callable[[float], Awaitable[None]]
#: The longest pause between two attempts, whatever the back-off has grown to.
MAX_BACKOFF_S = 4.0


class SearxngClient:
    """One SearXNG instance; ``http`` is the shared client (its pool is reused)."""

    def __init__(
        self,
        base_url: str,
        http: httpx.AsyncClient,
        timeout: float = 20.0,
        *,
        retry_backoff_s: float = 0.5,
        retries: int = 2,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        """``timeout`` bounds the whole call, retries included (its deadline). A network error
        or a 5xx is retried up to ``retries`` times after exponential back-off with jitter
        (``retry_backoff_s``, doubling, at most MAX_BACKOFF_S), never past the deadline."""
        self.base_url = base_url.rstrip("/").removesuffix("/search")
        self._http = http
        self._timeout = timeout
        self._backoff = retry_backoff_s
        self._retries = retries
        self._sleep = sleep

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        engines: Sequence[str] | None = None,
        pageno: int = 1,
    ) -> SearchResponse:
        """One page of results in SearXNG's order, de-duplicated by URL.

        Raises:
            SearxngError: unreachable, too slow, refusing JSON (403) or answering badly; the
                message names SearXNG's URL and is safe to show.
        """
        if not self.base_url:
            raise SearxngError("No SearXNG is configured: set SEARXNG_URL.", "", "config")
        params: dict[str, str | int] = {"q": query, "format": "json", "pageno": pageno}
        for key, value in (
            ("categories", categories),
            ("language", language),
            ("time_range", time_range),
        ):
            if value:
                params[key] = value
        if engines:
            # SearXNG's list syntax; the names were checked (api/shared/options.py ENGINE_PATTERN).
            params["engines"] = ",".join(engines)
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
        deadline = asyncio.get_running_loop().time() + self._timeout
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._retries + 1) | stop_before_delay(self._timeout),
            wait=wait_exponential_jitter(
                multiplier=self._backoff, max=MAX_BACKOFF_S, jitter=self._backoff
            ),
            retry=retry_if_exception_type(_Transient),
            before_sleep=self._log_retry,
            sleep=self._sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._attempt(params, deadline)
        raise AssertionError("unreachable")  # pragma: no cover - reraise=True raises

    async def _attempt(self, params: dict[str, str | int], deadline: float) -> httpx.Response:
        """One GET within what is left of the call's budget.

        Raises:
            _Transient: a network error or a 5xx (retried while the budget lasts).
            SearxngError: a timeout (the budget is spent) or a refusal (not retried).
        """
        # A spent budget times out at once (asyncio.timeout(0)), like a slow answer.
        left = max(deadline - asyncio.get_running_loop().time(), 0.0)
        try:
            async with asyncio.timeout(left):
                resp = await self._http.get(
                    f"{self.base_url}/search", params=params, timeout=max(left, 0.001)
                )
        except (TimeoutError, httpx.ReadTimeout):
            raise SearxngError(
                f"SearXNG at {self.base_url} did not answer within {self._timeout:g} s "
                "(SEARXNG_TIMEOUT_S).",
                self.base_url,
                "timeout",
            ) from None
        except httpx.TransportError as exc:
            raise _Transient(
                f"Cannot reach SearXNG at {self.base_url} ({_reason(exc)}); is it running, "
                "and is SEARXNG_URL right?",
                self.base_url,
                "unreachable",
            ) from exc
        if resp.status_code >= 500:
            message = f"SearXNG at {self.base_url} answered HTTP {resp.status_code}."
            raise _Transient(message, self.base_url, "unreachable")
        _raise_for_status(resp, self.base_url)
        return resp

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        logger.warning(
            "SearXNG attempt %d failed; retrying in %.2f s",
            state.attempt_number,
            wait,
            extra={"searxng_url": self.base_url, "error": str(error)},
        )


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
        raise SearxngError(FORBIDDEN.format(url=base_url), base_url, "forbidden")
    if status == 429:
        retry = resp.headers.get("retry-after", "")
        wait = float(retry) if retry.replace(".", "", 1).isdigit() else None
        raise SearxngError(
            RATE_LIMITED.format(url=base_url), base_url, "rate_limited", retry_after_s=wait
        )
    kind: ErrorKind = "unreachable" if status >= 500 else "bad_reply"
    raise SearxngError(f"SearXNG at {base_url} answered HTTP {status}.", base_url, kind)


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
