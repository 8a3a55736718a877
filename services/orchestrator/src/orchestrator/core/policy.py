"""The one sources policy: which sources a run may use, applied wherever a run starts.

With ``ORCHESTRATOR_WEB_SEARCH=off`` nothing may leave the machine. Every entry point (HTTP quick
search, deep research, the OpenAI-compatible API, MCP; the CLI goes through the HTTP API) asks
this module for its sources instead of reading the request's or the defaults itself, and the
search step filters again (a stored research run may be resumed after web search was turned off).
Pure: no I/O, no transport imports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from orchestrator.core import domains
from orchestrator.core.domains import DomainPolicy
from orchestrator.core.errors import DomainError, ErrorKind
from orchestrator.core.site_query import parse_query

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


class DomainSettings(Protocol):
    """The server's domain lists (``orchestrator.config.Settings`` has them): comma- or
    space-separated domains, validated when the settings are built."""

    @property
    def domains_allow(self) -> str: ...

    @property
    def domains_deny(self) -> str: ...


def _server_rules(settings: DomainSettings) -> tuple[tuple[str, ...], tuple[str, ...]]:
    cap = domains.MAX_SERVER_RULES
    allow = domains.normalize_all(
        domains.split_setting(settings.domains_allow), "ORCHESTRATOR_DOMAINS_ALLOW", cap
    )
    deny = domains.normalize_all(
        domains.split_setting(settings.domains_deny), "ORCHESTRATOR_DOMAINS_DENY", cap
    )
    return allow, deny


def domains_for(
    query: str,
    asked: Mapping[str, Sequence[str]] | None,
    settings: DomainSettings,
) -> tuple[str, DomainPolicy]:
    """The text to search and the domain policy of a run: the server's lists, the request's
    ``options.domains`` (``allow`` / ``deny``) and the query's ``site:`` operators, which are
    taken out of the text. Every entry point asks this before anything runs.

    Raises:
        InvalidDomain: a rule or an operator names no domain.
        DomainNotAllowed: a request allow rule is wholly outside the server's allow list.
        NothingLeftToSearch: the query is only operators.
    """
    site = parse_query(query)
    asked = asked or {}
    server_allow, server_deny = _server_rules(settings)
    policy = domains.build(
        server_allow=server_allow,
        server_deny=server_deny,
        allow=domains.normalize_all(asked.get("allow") or (), "options.domains.allow"),
        deny=domains.normalize_all(asked.get("deny") or (), "options.domains.deny"),
        site_allow=site.allow,
        site_deny=site.deny,
    )
    return site.text, policy


def stored_domains(rules: Mapping[str, Sequence[str]], settings: DomainSettings) -> DomainPolicy:
    """The policy of a stored run (its ``DomainPolicy.request_rules()``) under today's server
    lists: a deny added to the server since the run started applies when it resumes (an allow
    list changed since then narrows the run as well: its results are filtered, nothing raised).
    """
    server_allow, server_deny = _server_rules(settings)
    return domains.build(
        server_allow=server_allow,
        server_deny=server_deny,
        allow=tuple(rules.get("allow") or ()),
        deny=tuple(rules.get("deny") or ()),
        site_allow=tuple(rules.get("site_allow") or ()),
        site_deny=tuple(rules.get("site_deny") or ()),
        check=False,
    )


class RunPolicy(SourcesPolicy, DomainSettings, Protocol):
    """Everything the policies read (``orchestrator.config.Settings`` is one)."""
