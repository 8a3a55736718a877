"""Types the SearXNG client returns (shared by the client and the agent loop)."""

from __future__ import annotations

from dataclasses import dataclass, field


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


class SearxngError(Exception):
    """SearXNG could not be reached or refused; the message is safe to show the user."""

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message)
        self.url = url
