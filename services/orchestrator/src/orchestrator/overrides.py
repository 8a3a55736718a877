"""Settings a user changes at run time (``PATCH /v1/settings``, the UI's settings panel).

The environment stays the source of defaults: an override replaces one setting until it is
reset (``null``), and is validated with the same rules as its environment variable. Secrets
(``brave_api_key``, ``llm_api_key``) are ``SecretStr``: never shown in a response, ``repr``,
log or trace — a view says only whether one is set.
"""

from __future__ import annotations

from typing import Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from orchestrator.config import (
    _BACKENDS,
    _HTTP_URL,
    _HTTP_URLS,
    Settings,
    is_loopback,
    parsed_urls,
)
from orchestrator.core.errors import DomainError, ErrorKind

#: The settings that may be changed, with the environment variable each overrides.
EDITABLE: Final = {
    "search_backends": "ORCHESTRATOR_SEARCH_BACKENDS",
    "search_mode": "ORCHESTRATOR_SEARCH_MODE",
    "searxng_url": "SEARXNG_URL",
    "brave_api_key": "BRAVE_API_KEY",
    "top_urls": "ORCHESTRATOR_TOP_URLS",
    "mode": "ORCHESTRATOR_MODE",
    "web_search": "ORCHESTRATOR_WEB_SEARCH",
    "llm_provider": "LLM_PROVIDER",
    "llm_base_url": "LLM_BASE_URL",
    "llm_model": "LLM_MODEL",
    "llm_api_key": "LLM_API_KEY",
    "agent": "ORCHESTRATOR_AGENT",
}
SECRETS: Final = ("brave_api_key", "llm_api_key")


class SettingsForbidden(DomainError):
    """Only an admin may change settings once there are users."""

    kind = ErrorKind.FORBIDDEN
    title = "Forbidden"
    code = "admin_only"


class SettingsInvalid(DomainError):
    """The overrides, taken together, do not make a valid configuration."""

    kind = ErrorKind.INVALID
    title = "Invalid settings"


class SettingsPatch(BaseModel):
    """``PATCH /v1/settings``: each field given replaces its setting; ``null`` resets it to the
    environment's value. The rules are the environment variables' own."""

    model_config = ConfigDict(extra="forbid")

    search_backends: str | None = Field(
        default=None, pattern=_BACKENDS, description="searxng, brave, or both in order"
    )
    search_mode: Literal["failover", "merge"] | None = None
    searxng_url: str | None = Field(
        default=None, pattern=_HTTP_URLS, description="SearXNG instances, comma-separated"
    )
    brave_api_key: SecretStr | None = Field(default=None, description="write-only")
    top_urls: int | None = Field(default=None, ge=1, le=50, description="results kept per search")
    mode: Literal["auto", "speed", "balanced", "quality"] | None = None
    web_search: Literal["on", "off"] | None = None
    llm_provider: Literal["ollama", "openai"] | None = None
    llm_base_url: str | None = Field(default=None, pattern=_HTTP_URL)
    llm_model: str | None = Field(default=None, max_length=200)
    llm_api_key: SecretStr | None = Field(default=None, description="write-only")
    agent: Literal["off", "on", "auto"] | None = None

    @field_validator("searxng_url", "llm_base_url")
    @classmethod
    def _urls(cls, value: str | None) -> str | None:
        return None if value is None else parsed_urls(value)

    def split(self) -> tuple[dict[str, Any], list[str]]:
        """(values to store as JSON, names to reset)."""
        changed: dict[str, Any] = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if value is not None:
                changed[name] = value.get_secret_value() if name in SECRETS else value
        reset = [n for n in self.model_fields_set if getattr(self, n) is None]
        return changed, reset


def apply(defaults: Settings, stored: dict[str, Any]) -> Settings:
    """``defaults`` (from the environment) with the ``stored`` overrides, validated again.

    Raises:
        SettingsInvalid: a stored value no longer passes (e.g. written by a newer build).
    """
    known = {k: v for k, v in stored.items() if k in EDITABLE}
    try:
        patch = SettingsPatch.model_validate(known)
    except ValueError as err:
        raise SettingsInvalid(f"Stored settings are invalid: {err}") from None
    update = {n: getattr(patch, n) for n in patch.model_fields_set}
    return defaults.model_copy(update={k: v for k, v in update.items() if v is not None})


def view(settings: Settings, overridden: set[str], *, editable: bool) -> dict[str, Any]:
    """``GET /v1/settings``: the values in force, what is overridden, and the privacy notice."""
    values = {n: getattr(settings, n) for n in EDITABLE if n not in SECRETS}
    return {
        "settings": values,
        "secrets": {n: bool(getattr(settings, n).get_secret_value()) for n in SECRETS},
        "overridden": sorted(overridden & set(EDITABLE)),
        "env": dict(EDITABLE),
        "editable": editable,
        "privacy": privacy(settings),
    }


def _where(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:  # not reachable through the checked settings; never a 500 here
        return "an address that does not parse"
    return "this machine" if is_loopback(host) else host


def privacy(settings: Settings) -> dict[str, Any]:
    """What leaves the machine with these settings, and what to do about it."""
    leaves: list[str] = []
    if settings.web_search == "on":
        for url in settings.searxng_urls() if "searxng" in settings.backend_names() else []:
            leaves.append(
                f"Search queries (rewritten from your questions) go to SearXNG at {_where(url)}, "
                "which forwards them to the search engines it is configured to use."
            )
        if "brave" in settings.backend_names():
            leaves.append("Search queries go to the Brave Search API (api.search.brave.com).")
        leaves.append(
            "The reader fetches the result pages from their sites: they see this server's "
            "address, not the question."
        )
    else:
        leaves.append("Web search is off: no query and no page request leaves the machine.")
    llm = _where(settings.llm_base_url) if settings.llm_base_url else "no model configured"
    if llm != "this machine":
        leaves.append(
            f"Your questions, the conversation and the passages found (local documents "
            f"included) go to the language model at {llm}."
        )
    return {
        "web_search": settings.web_search,
        "model_host": llm,
        "leaves_the_machine": leaves,
        "recommendations": [
            "Use a SearXNG instance you run yourself rather than a public one.",
            "Turn web search off when asking about private documents.",
            "Keep the language model on this machine (the embedded model, or Ollama).",
        ],
    }
