"""Request and response bodies of the HTTP API (v1)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.events import API_VERSION

SESSION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
# Bounds of the numbers a client puts in a query string or header: SQLite's integers end at
# 2**63 - 1 (a larger offset overflowed into a 500), and no list or event log comes near these.
MAX_OFFSET = 1_000_000
MAX_PAGE = 100
MAX_EVENT_ID = 2**31 - 1


class SearchOptions(BaseModel):
    """Per-request options; each falls back to the server's setting when absent."""

    model_config = ConfigDict(extra="forbid")

    max_rounds: int | None = Field(default=None, ge=1, le=10, description="search rounds, 1-10")
    prefetch: bool | None = Field(
        default=None, description="start reading pages while the snippet judge runs"
    )
    categories: str | None = Field(
        default=None, max_length=200, description="SearXNG categories, e.g. 'general,news'"
    )
    language: str | None = Field(default=None, max_length=20, description="e.g. 'en'")
    time_range: Literal["day", "week", "month", "year"] | None = None
    sources: list[Literal["web", "local"]] | None = Field(
        default=None,
        min_length=1,
        description="where to search: 'web' (SearXNG), 'local' (the indexed documents) or "
        "both (fused by reciprocal rank fusion); absent: ORCHESTRATOR_SOURCES",
    )
    allow_unsourced: bool | None = Field(
        default=None,
        description="when search is off, down or finds nothing, answer from the model alone "
        "(labelled, with an answered_without_sources warning); false: end with the error "
        "instead; absent: ORCHESTRATOR_ALLOW_UNSOURCED",
    )
    search_cache: bool | None = Field(
        default=None,
        description="false: search afresh instead of using a cached result of the same search "
        "(ORCHESTRATOR_SEARCH_CACHE_S)",
    )
    mode: Literal["speed", "balanced", "quality"] | None = Field(
        default=None,
        description="speed: one search round, no judges, few sources (one LLM call in the "
        "common case); balanced: planner, judges, up to max_rounds rounds; quality: more rounds, "
        "pages and sources; absent: ORCHESTRATOR_MODE",
    )
    detail: Literal["brief", "full"] | None = Field(
        default=None,
        description="answer length: brief (one or two sentences) or full (a direct answer, then "
        "2-4 paragraphs); absent: short for a bare fact, longer for explanations",
    )
    scope: str | None = Field(
        default=None,
        max_length=4096,
        description="pin the question to a folder or file of the local documents (an absolute "
        "path or a local: id, as GET /v1/corpus/documents lists them): only its passages are "
        "used and the web is not searched; one that names nothing you can see is a 422",
    )


class SearchRequest(BaseModel):
    """POST /v1/search."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000, description="the question")
    session_id: str | None = Field(
        default=None,
        pattern=SESSION_ID_PATTERN,
        description="continue this conversation (created on first use); omitted: a new one",
    )
    options: SearchOptions = Field(default_factory=SearchOptions)
    edit_turn: int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="edit and regenerate: ask this (1-based) turn of session_id again with "
        "`query`; the turns after it are replaced by the new answer",
    )


class Source(BaseModel):
    """One numbered source; ``[n]`` in the answer points at it."""

    n: int
    url: str
    title: str
    excerpt: str
    origin: Literal["web", "local"] = Field(
        default="web", description="web (SearXNG) or local (a document of the corpus)"
    )
    published: str = Field(
        default="", description="publication date as the search backend gave it, if known"
    )


class RunStats(BaseModel):
    """What ``run.completed`` reports besides the status."""

    rounds: int = 0
    pages_read: int = 0
    llm_calls: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    duration_ms: float = 0.0


class Notice(BaseModel):
    """A warning or error: a stable ``code`` and a message for people."""

    code: str
    message: str


class SearchResult(BaseModel):
    """The final result (``Accept: application/json``)."""

    api_version: str = API_VERSION
    run_id: str | None
    session_id: str | None
    status: Literal["answered", "clarify", "from_history", "error"]
    answer: str
    sources: list[Source]
    cited: list[int]
    removed_citations: list[int]
    added_citations: list[int] = Field(
        default_factory=list, description="citations the engine attached to uncited sentences"
    )
    clarifying_question: str | None
    warnings: list[Notice]
    error: Notice | None
    stats: RunStats


class SessionTurn(BaseModel):
    """One question of a session and what it got."""

    question: str
    answer: str
    sources: list[dict[str, Any]]
    status: str
    at: float


class SessionView(BaseModel):
    """GET /v1/sessions/{id}."""

    session_id: str
    owner: str = Field(description="the principal the session belongs to")
    title: str = Field(description="the rename, else the first question")
    type: Literal["chat", "research"] = "chat"
    created: float
    updated: float
    turns: list[SessionTurn]


class SessionSummary(BaseModel):
    """One session in GET /v1/sessions."""

    session_id: str
    owner: str = Field(description="the principal the session belongs to")
    title: str
    type: Literal["chat", "research"] = "chat"
    created: float
    updated: float
    turns: int = Field(description="number of turns")


class SessionPage(BaseModel):
    """GET /v1/sessions: newest first."""

    sessions: list[SessionSummary]
    total: int
    offset: int
    limit: int


class SessionPatch(BaseModel):
    """PATCH /v1/sessions/{id}."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200, description="the session's new title")


class Problem(BaseModel):
    """An RFC 7807 problem (``application/problem+json``)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[dict[str, Any]] | None = None
