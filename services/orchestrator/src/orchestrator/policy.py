"""The one sources policy: which sources a run may use, applied wherever a run starts.

With ``ORCHESTRATOR_WEB_SEARCH=off`` nothing may leave the machine. Every entry point (HTTP quick
search, deep research, the OpenAI-compatible API, MCP; the CLI goes through the HTTP API) asks
this module for its sources instead of reading the request's or the defaults itself, and the
search step filters again (a stored research run may be resumed after web search was turned off).
Pure: no I/O, no transport imports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from orchestrator.errors import DomainError, ErrorKind

SEARCH_OFF = "Web search is off (ORCHESTRATOR_WEB_SEARCH=off) and no local documents are searched."


class SourcesPolicy(Protocol):
    """The two settings the policy reads (``orchestrator.config.Settings`` is one)."""

    def default_sources(self) -> tuple[str, ...]: ...

    def allowed_sources(self, sources: Sequence[str]) -> tuple[str, ...]: ...


class SearchOff(DomainError):
    """The request leaves nothing to search: it asked only for sources that are off."""

    kind = ErrorKind.INVALID
    title = "Nothing to search"
    code = "search_off"


def sources_for(asked: Sequence[str] | None, settings: SourcesPolicy) -> tuple[str, ...]:
    """The sources a quick question may use: the request's (or the defaults), never the web
    when web search is off. Empty defaults are allowed: the question is answered from the
    model alone, labelled as such, and nothing is searched.

    Raises:
        SearchOff: the request named sources and every one of them is off.
    """
    if not asked:
        return settings.default_sources()
    allowed = settings.allowed_sources(asked)
    if not allowed:
        raise SearchOff(
            f"{SEARCH_OFF} The request asked for {', '.join(dict.fromkeys(asked))} only."
        )
    return allowed


def research_sources(asked: Sequence[str] | None, settings: SourcesPolicy) -> tuple[str, ...]:
    """The sources a deep-research run may use; a run with none could only fail, so it is
    refused before it starts.

    Raises:
        SearchOff: nothing is left to search.
    """
    sources = sources_for(asked, settings)
    if not sources:
        raise SearchOff(f"{SEARCH_OFF} Deep research needs something to search.")
    return sources
