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


@dataclass(frozen=True)
class SearchResponse:
    """A page of results plus the engines that did not answer."""

    hits: list[SearchHit]
    unresponsive_engines: list[str] = field(default_factory=list)


class SearxngError(Exception):
    """SearXNG could not be reached or refused; the message is safe to show the user."""

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message)
        self.url = url
