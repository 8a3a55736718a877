"""Types the search backends return (shared by the backends and the agent loop)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: Why a search failed: what the caller does next depends on it (429: back off, next instance).
ErrorKind = Literal["unreachable", "timeout", "forbidden", "rate_limited", "bad_reply", "config"]


@dataclass(frozen=True)
class SearchHit:
    """One search result in SearXNG's order (``engine_rank`` is 1-based)."""

    url: str
    title: str
    snippet: str
    engine_rank: int
    engines: tuple[str, ...] = ()
    published: str = ""
    score: float = 0.0  # SearXNG's own merged score (higher is better)
    # Where the hit came from: "web" (SearXNG) or "local" (the corpus).
    source: str = "web"


@dataclass(frozen=True)
class SearchResponse:
    """A page of results plus the engines that did not answer."""

    hits: list[SearchHit]
    unresponsive_engines: list[str] = field(default_factory=list)
    # (engine, reason) as SearXNG reports them, e.g. ("brave", "timeout")
    unresponsive_reasons: list[tuple[str, str]] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    # Which backend answered (e.g. "searxng", "searxng@10.0.0.2:8888", "brave"); set by the
    # search service, with "+" between names when results were merged.
    backend: str = ""
    # Served from the search-result cache.
    cached: bool = False
    # What the backend said about its quota (e.g. Brave's monthly requests left).
    quota: dict[str, int] = field(default_factory=dict)


class SearxngError(Exception):
    """A search backend could not be reached or refused; the message is safe to show the user
    and says what to do. (Named for SearXNG, the first backend; every backend raises it.)"""

    def __init__(
        self,
        message: str,
        url: str,
        kind: ErrorKind = "bad_reply",
        *,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.kind = kind
        self.retry_after_s = retry_after_s


SearchError = SearxngError
