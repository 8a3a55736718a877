"""Request and response bodies of the HTTP API (v1)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.shared.options import SearchOptions
from orchestrator.core.events import API_VERSION

SESSION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
# Bounds of the numbers a client puts in a query string or header: SQLite's integers end at
# 2**63 - 1 (a larger offset overflowed into a 500), and no list or event log comes near these.
MAX_OFFSET = 1_000_000
MAX_PAGE = 100
MAX_EVENT_ID = 2**31 - 1


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
