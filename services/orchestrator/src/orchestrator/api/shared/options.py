"""The run options a request may carry, the same for every face: ``options`` of POST /v1/search,
``quarry`` of the OpenAI-compatible chat completions, and the MCP tools' arguments."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

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
