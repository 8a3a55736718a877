"""Web search: backends (SearXNG, Brave), what a question may search, and the domain policy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

from orchestrator.config.checks import BACKENDS, HTTP_URL, HTTP_URLS, RATE, SOURCES, parsed_urls
from orchestrator.core.domains import MAX_SERVER_RULES, InvalidDomain, normalize_all, split_setting


class SearchSettings(BaseModel):
    """Search engines and the sources policy; a part of ``Settings``."""

    searxng_url: str = Field(default="", pattern=HTTP_URLS, validation_alias="SEARXNG_URL")
    searxng_timeout_s: float = Field(
        default=20.0, gt=0, le=300, validation_alias="SEARXNG_TIMEOUT_S"
    )
    searxng_retry_backoff_s: float = Field(
        default=0.5, ge=0, le=30, validation_alias="SEARXNG_RETRY_BACKOFF_S"
    )
    # Retries of a search after a network error or a 5xx, with exponential back-off and jitter
    # from SEARXNG_RETRY_BACKOFF_S, all within SEARXNG_TIMEOUT_S (adapters/search/searxng.py).
    searxng_retries: int = Field(default=2, ge=0, le=5, validation_alias="SEARXNG_RETRIES")
    # Process-wide: one semaphore for the search engines, shared by all questions.
    searxng_max_inflight: int = Field(default=8, ge=1, le=256)

    # --- search backends (ORCHESTRATOR_SEARCH_*, SEARXNG_*, BRAVE_*) ---
    search_backends: str = Field(default="searxng", pattern=BACKENDS)
    # failover: the first backend that answers; merge: all at once, fused by RRF.
    search_mode: Literal["failover", "merge"] = "failover"
    # Seconds a search result is served from memory; 0 turns the cache off.
    search_cache_s: float = Field(default=300.0, ge=0, le=86400)
    # Process-wide rate per SearXNG instance (limits syntax); Brave has its own below.
    search_rate_limit: str = Field(default="10/second", pattern=RATE)
    # Pick a SearXNG category and time range from the question (a request's own win).
    search_routing: bool = True
    # An instance that answered 429 is skipped this long (unless it sent Retry-After).
    searxng_backoff_s: float = Field(
        default=30.0, ge=0, le=86400, validation_alias="SEARXNG_BACKOFF_S"
    )
    brave_api_key: SecretStr = Field(default=SecretStr(""), validation_alias="BRAVE_API_KEY")
    brave_url: str = Field(
        default="https://api.search.brave.com", pattern=HTTP_URL, validation_alias="BRAVE_URL"
    )
    # Brave's free plan allows 1 request per second.
    brave_rate_limit: str = Field(
        default="1/second", pattern=RATE, validation_alias="BRAVE_RATE_LIMIT"
    )

    # --- sources and degradation (ORCHESTRATOR_SOURCES, _WEB_SEARCH, _ALLOW_UNSOURCED) ---
    # Default search sources: auto = web when SEARXNG_URL is set, plus local when CORPUS_DIR is.
    sources: str = Field(default="auto", pattern=SOURCES)
    # Web search is an explicit choice: "off" sends nothing to any search engine.
    web_search: Literal["on", "off"] = "on"
    # Answer from the model alone, clearly labelled, when search is off, down or finds nothing.
    allow_unsourced: bool = True
    # --- source policy by domain (orchestrator/core/domains.py; docs/sources.md) ---
    # Comma- or space-separated domains: example.com (and its subdomains), *.example.com (only
    # its subdomains). Empty allow list: every domain not denied. A request narrows these only.
    domains_allow: str = Field(default="", max_length=1_000_000)
    domains_deny: str = Field(default="", max_length=1_000_000)

    @field_validator("searxng_url", "brave_url")
    @classmethod
    def _search_urls(cls, value: str) -> str:
        return parsed_urls(value)

    @field_validator("domains_allow", "domains_deny")
    @classmethod
    def _domains(cls, value: str) -> str:
        try:
            return ",".join(normalize_all(split_setting(value), "the list", MAX_SERVER_RULES))
        except InvalidDomain as err:  # pydantic reports a ValueError with the setting's name
            raise ValueError(err.detail) from None

    def searxng_urls(self) -> list[str]:
        """The SearXNG instances, in failover order."""
        return [u.strip() for u in self.searxng_url.split(",") if u.strip()]

    def backend_names(self) -> list[str]:
        """The configured search backends, in order."""
        return list(dict.fromkeys(b.strip() for b in self.search_backends.split(",")))

    def allowed_sources(self, sources: Sequence[str]) -> tuple[str, ...]:
        """``sources`` without the web when web search is off (possibly none at all)."""
        return tuple(s for s in dict.fromkeys(sources) if s != "web" or self.web_search == "on")
