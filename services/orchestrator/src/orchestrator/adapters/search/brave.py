"""The Brave Search API as a search backend: ``GET {base}/res/v1/web/search`` with a key.

Brave answers every request with its rate-limit state in headers, one value per window
(per second, then per month), e.g. ``X-RateLimit-Limit: 1, 2000`` and
``X-RateLimit-Remaining: 0, 1850`` and ``X-RateLimit-Reset: 1, 1419704`` (seconds until the
window resets). The client keeps the last values: a 429 then says which window ran out and when
it comes back, and the monthly quota is shown in /readyz and in `search.completed`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from orchestrator.core.ask.domain import ErrorKind, SearchFailed, SearchHit, SearchResponse

logger = logging.getLogger(__name__)

DEFAULT_URL = "https://api.search.brave.com"
# Brave's maximum page size for web search.
COUNT = 20
# SearXNG's time_range names → Brave's freshness codes.
_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
NO_KEY = (
    "The Brave Search backend needs an API key: set BRAVE_API_KEY "
    "(keys are issued at brave.com/search/api)."
)


@dataclass(frozen=True)
class Quota:
    """The last rate-limit headers seen: per-second and monthly limits and what is left."""

    limit_s: int
    remaining_s: int
    limit_month: int
    remaining_month: int
    reset_month_s: int
    at: float

    def as_dict(self) -> dict[str, int]:
        """For events and /readyz."""
        return {
            "monthly_limit": self.limit_month,
            "monthly_remaining": self.remaining_month,
            "monthly_reset_s": max(0, self.reset_month_s - int(time.monotonic() - self.at)),
        }


def _pair(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    parts = [p.strip() for p in value.split(",")]
    try:
        nums = [int(float(p)) for p in parts if p]
    except ValueError:
        return None
    if not nums:
        return None
    return nums[0], nums[-1]


def parse_quota(headers: httpx.Headers) -> Quota | None:
    """Brave's X-RateLimit-* headers, or None when a header is missing or malformed."""
    limit = _pair(headers.get("x-ratelimit-limit"))
    left = _pair(headers.get("x-ratelimit-remaining"))
    reset = _pair(headers.get("x-ratelimit-reset"))
    if limit is None or left is None or reset is None:
        return None
    return Quota(limit[0], left[0], limit[1], left[1], reset[1], time.monotonic())


class BraveClient:
    """One Brave Search API key; ``http`` is the shared client."""

    name = "brave"

    def __init__(
        self, api_key: str, http: httpx.AsyncClient, *, base_url: str = DEFAULT_URL, timeout: float
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self._http = http
        self._timeout = timeout
        self.quota: Quota | None = None

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
        """One page of web results in Brave's order (``pageno``: Brave's ``offset`` + 1;
        ``engines`` name SearXNG engines and mean nothing to Brave).

        Raises:
            SearchFailed: no key, a refused key, a spent quota (kind ``rate_limited``, with the
                wait), an unreachable or slow API; the message says what to do.
        """
        if not self._key:
            raise SearchFailed(NO_KEY, self.base_url, "config")
        params: dict[str, str | int] = {"q": query, "count": COUNT}
        if pageno > 1:
            params["offset"] = pageno - 1
        if time_range in _FRESHNESS:
            params["freshness"] = _FRESHNESS[time_range]
        if language:
            params["search_lang"] = language
        headers = {"Accept": "application/json", "X-Subscription-Token": self._key}
        url = f"{self.base_url}/res/v1/web/search"
        try:
            async with asyncio.timeout(self._timeout):
                resp = await self._http.get(url, params=params, headers=headers)
        except TimeoutError:
            raise SearchFailed(
                f"The Brave Search API did not answer within {self._timeout:g} s.",
                self.base_url,
                "timeout",
            ) from None
        except httpx.HTTPError as exc:
            raise SearchFailed(
                f"Cannot reach the Brave Search API at {self.base_url} ({type(exc).__name__}).",
                self.base_url,
                "unreachable",
            ) from exc
        self.quota = parse_quota(resp.headers) or self.quota
        self._raise_for_status(resp)
        try:
            data = resp.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise SearchFailed("The Brave Search API answered with invalid JSON.", self.base_url)
        quota = self.quota.as_dict() if self.quota else {}
        return SearchResponse(hits=parse_results(data), backend=self.name, quota=quota)

    def _raise_for_status(self, resp: httpx.Response) -> None:
        status = resp.status_code
        if status < 400:
            return
        if status in (401, 403):
            raise SearchFailed(
                f"The Brave Search API refused the key (HTTP {status}): check BRAVE_API_KEY, "
                "and that its plan includes web search.",
                self.base_url,
                "forbidden",
            )
        if status == 429:
            raise self._rate_limited()
        kind: ErrorKind = "unreachable" if status >= 500 else "bad_reply"
        raise SearchFailed(f"The Brave Search API answered HTTP {status}.", self.base_url, kind)

    def _rate_limited(self) -> SearchFailed:
        quota = self.quota
        if quota is not None and quota.remaining_month <= 0:
            days = quota.reset_month_s / 86400
            return SearchFailed(
                f"The Brave Search API's monthly quota of {quota.limit_month} requests is spent; "
                f"it renews in {days:.1f} days. Upgrade the plan or use SearXNG "
                "(ORCHESTRATOR_SEARCH_BACKENDS).",
                self.base_url,
                "rate_limited",
                retry_after_s=float(quota.reset_month_s),
            )
        per_s = quota.limit_s if quota is not None else 1
        return SearchFailed(
            f"The Brave Search API's rate limit ({per_s} per second) was hit; lower "
            "BRAVE_RATE_LIMIT to match the plan.",
            self.base_url,
            "rate_limited",
            retry_after_s=1.0,
        )

    async def ping(self, *, timeout: float) -> bool:
        """True when a key is set (a real search would spend quota)."""
        return bool(self._key)


def parse_results(data: dict[str, Any]) -> list[SearchHit]:
    """Brave's ``web.results`` → hits; malformed items are skipped."""
    web = data.get("web")
    raw = web.get("results") if isinstance(web, dict) else None
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for item in raw or []:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")) or url in seen:
            continue
        seen.add(url)
        published = item.get("page_age") or item.get("age") or ""
        hits.append(
            SearchHit(
                url=url,
                title=" ".join(_strip_tags(str(item.get("title") or "")).split()),
                snippet=" ".join(_strip_tags(str(item.get("description") or "")).split()),
                engine_rank=len(hits) + 1,
                engines=("brave",),
                published=str(published),
            )
        )
    return hits


def _strip_tags(text: str) -> str:
    # Brave marks query words with <strong>; nothing else is markup.
    return text.replace("<strong>", "").replace("</strong>", "")
