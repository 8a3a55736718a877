"""The agent's domain values and the failures its ports report; no transport here.

Adapters (clients/) translate SearXNG JSON and gRPC messages into these and their errors
into these exceptions, so a new search backend or ranker is one new adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: Why a search failed: what the caller does next depends on it (429: back off, next instance).
ErrorKind = Literal["unreachable", "timeout", "forbidden", "rate_limited", "bad_reply", "config"]


@dataclass(frozen=True)
class SearchHit:
    """One search result in its engine's order (``engine_rank`` is 1-based)."""

    url: str
    title: str
    snippet: str
    engine_rank: int
    engines: tuple[str, ...] = ()
    published: str = ""
    score: float = 0.0  # the engine's own merged score (higher is better)
    # Where the hit came from: "web" (SearXNG) or "local" (the corpus).
    source: str = "web"


@dataclass(frozen=True)
class SupportVerdict:
    """The support model's verdict on one sentence: the score of the cited passage that backs
    it best, in [0, 1], and its label (supported, partly or unsupported)."""

    score: float
    label: str


@dataclass(frozen=True)
class SearchResponse:
    """A page of results plus the engines that did not answer."""

    hits: list[SearchHit]
    unresponsive_engines: list[str] = field(default_factory=list)
    # (engine, reason) as the engine reports them, e.g. ("brave", "timeout")
    unresponsive_reasons: list[tuple[str, str]] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    # Which backend answered (e.g. "searxng", "searxng@10.0.0.2:8888", "brave"); set by the
    # search service, with "+" between names when results were merged.
    backend: str = ""
    # Served from the search-result cache.
    cached: bool = False
    # What the backend said about its quota (e.g. Brave's monthly requests left).
    quota: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PageRead:
    """The outcome of reading one URL; ``status`` is a reader status name (OK, EMPTY, ...)."""

    url: str
    status: str
    title: str = ""
    markdown: str = ""
    final_url: str = ""
    cached: bool = False
    error: str = ""
    ms: int = 0
    attempts: int = 1
    # Which reader tier gave the text (fetch, pdf, render) and the render tier's part, as the
    # read event's payload carries them: {"status", "reason", "ms", "requests", "refused"}.
    tier: str = ""
    render: dict[str, str | int] | None = None

    @property
    def usable(self) -> bool:
        """True when the page gave text worth ranking (EMPTY pages are skipped)."""
        return self.status == "OK" and bool(self.markdown.strip())


@dataclass(frozen=True)
class PageText:
    """A read page handed to the ranker."""

    url: str
    title: str
    markdown: str


@dataclass(frozen=True)
class Passage:
    """A span of a page the ranker picked as evidence."""

    url: str
    title: str
    text: str
    score: float = 0.0
    # 0-based position of the passage within its page.
    index: int = 0
    # 1-based page of a local PDF the passage comes from (0: unknown or not a PDF).
    page: int = 0


@dataclass(frozen=True)
class LocalPassages:
    """The index's passages of local documents, best first (``url`` is the document id)."""

    passages: list[Passage]
    # "hybrid" (BM25 + dense by RRF) or "bm25" (the index has no embeddings).
    retrieval: str = "bm25"


@dataclass(frozen=True)
class Evidence:
    """One source the LLM sees: a snippet, ranked passages, or an earlier answer's source."""

    url: str
    title: str
    text: str
    kind: str = "chunk"
    # The separate texts ``text`` joins (passages, snippet), as shown to the user.
    passages: tuple[str, ...] = ()
    # When the page says it was published (as the search backend gave it), if known.
    published: str = ""
    # The PDF pages (1-based) its passages come from: a local PDF is cited by page.
    pages: tuple[int, ...] = ()

    @property
    def parts(self) -> tuple[str, ...]:
        """The texts the model saw for this source."""
        return self.passages or (self.text,)


class SearchFailed(Exception):
    """A search backend could not be reached or refused; the message is safe to show and says
    what to do. ``kind`` says why (a 429 is ``rate_limited``, with ``retry_after_s`` if known)."""

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


class ReaderUnavailable(Exception):
    """The reader cannot be reached or does not serve reads; ``code`` names the failure."""

    def __init__(self, code: str) -> None:
        super().__init__(f"reader unavailable ({code})")
        self.code = code


class RankerUnavailable(Exception):
    """The ranker failed the call; the loop falls back to engine order or page order."""

    def __init__(self, code: str) -> None:
        super().__init__(f"ranker unavailable ({code})")
        self.code = code


class CorpusError(Exception):
    """A local-documents call failed; ``code`` names the failure, the message is safe to show."""

    #: Codes that mean "try again shortly" (the service is starting or busy).
    RETRYABLE = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED", "UNKNOWN"})

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    @property
    def retryable(self) -> bool:
        """True when the failure looks transient (service starting, overloaded)."""
        return self.code in self.RETRYABLE
