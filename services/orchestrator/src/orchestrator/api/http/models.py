"""Request and response bodies of the HTTP API (v1)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.core.events import API_VERSION

SESSION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
# Bounds of the numbers a client puts in a query string or header: SQLite's integers end at
# 2**63 - 1 (a larger offset overflowed into a 500), and no list or event log comes near these.
MAX_OFFSET = 1_000_000
MAX_PAGE = 100
MAX_EVENT_ID = 2**31 - 1
# A SearXNG engine name as its settings.yml spells them ("duckduckgo", "arch linux wiki",
# "brave.news"): lower-case words; no comma (SearXNG's list separator), no other punctuation.
ENGINE_PATTERN = r"^[a-z0-9][a-z0-9 ._-]{0,39}$"
MAX_ENGINES = 16
MAX_PAGENO = 10


DomainEntry = Annotated[str, Field(min_length=1, max_length=300)]


class DomainLists(BaseModel):
    """``options.domains``: where web results may come from (docs/sources.md)."""

    model_config = ConfigDict(extra="forbid")

    allow: list[DomainEntry] = Field(
        default_factory=list,
        max_length=100,
        description="only these domains (example.com: it and its subdomains; *.example.com: "
        "only its subdomains); within the server's ORCHESTRATOR_DOMAINS_ALLOW",
    )
    deny: list[DomainEntry] = Field(
        default_factory=list, max_length=100, description="never these domains (same syntax)"
    )


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
    engines: list[Annotated[str, Field(pattern=ENGINE_PATTERN)]] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ENGINES,
        description="SearXNG engines to ask, by name as its settings.yml spells them (e.g. "
        "['wikipedia', 'arxiv']); engines the instance does not have are ignored by SearXNG; "
        "absent: the instance's defaults for the category",
    )
    pageno: int | None = Field(
        default=None,
        ge=1,
        le=MAX_PAGENO,
        description="which page of search results to read, 1-10 (a follow-up that wants other "
        "pages than the first answer's); absent: 1",
    )
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
    agent: Literal["off", "on", "auto"] | None = Field(
        default=None,
        description="the agent mode: on (a tool-calling model picks its own searches, reads, "
        "calculations), off (the fixed pipeline), auto (the agent only for a model that passes "
        "the tool-calling probe); absent: ORCHESTRATOR_AGENT",
    )
    domains: DomainLists | None = Field(
        default=None,
        description="allow and deny lists of domains, applied with the server's and the "
        "query's site: / -site: operators (docs/sources.md)",
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
    policy: dict[str, Any] | None = Field(
        default=None,
        description="the source policy's rules and what it dropped (docs/sources.md); null "
        "without domain rules",
    )


class SessionMemory(BaseModel):
    """How much of a conversation the next question carries (the memory meter)."""

    turns: int = Field(description="turns in the session")
    kept: int = Field(description="the newest turns the next question's prompts will carry")
    dropped: int = Field(description="the oldest turns left out: over the history budget")
    chars: int = Field(description="characters of questions and answers the kept turns take")
    budget: int = Field(
        description="the history budget in characters (ORCHESTRATOR_HISTORY_CHARS, capped by "
        "the model's context)"
    )
    stored_chars: int = Field(description="characters the session's turns hold, sources included")
    stored_budget: int = Field(
        description="what one session may hold (ORCHESTRATOR_SESSION_MAX_CHARS); beyond it the "
        "oldest turns are forgotten"
    )


class SessionView(BaseModel):
    """GET /v1/sessions/{id}."""

    session_id: str
    owner: str = Field(description="the principal the session belongs to")
    title: str = Field(description="the rename, else the first question")
    type: Literal["chat", "research"] = "chat"
    created: float
    updated: float
    turns: list[SessionTurn]
    memory: SessionMemory | None = Field(
        default=None, description="the history budget the next question will use"
    )


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
