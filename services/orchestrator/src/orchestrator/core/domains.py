"""The source policy by domain: allow and deny lists, ``site:`` operators, and the verdict on a URL.

Rules come from three places: the server's settings (``ORCHESTRATOR_DOMAINS_ALLOW`` /
``_DENY``), the request's ``options.domains`` and the query's own ``site:`` / ``-site:``
operators. ``example.com`` matches the domain and every subdomain; ``*.example.com`` only the
subdomains. A URL is dropped when any deny rule matches it (the server's first, so a server deny
always wins over a request's allow), or when an allow list exists and no rule of it matches; the
server's and the request's allow lists must both match, so a request narrows the server's list
and never widens it. Local documents are never judged.

Names are compared as IDNA A-labels (``bücher.example`` is ``xn--bcher-kva.example``), through
the ``idna`` package (IDNA 2008 with the UTS 46 mapping browsers use; Python's own codec is IDNA
2003). Pure: no I/O, no transport imports.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import idna

from orchestrator.core.errors import DomainError, ErrorKind

Scope = Literal["server", "request", "query"]
Stage = Literal["search", "result", "redirect"]

# Rules per list and request: more is a mistake (or an attack on the matcher), not a policy.
MAX_RULES = 100
# A server's lists may be blocklists: matching is by lookup, so size costs little.
MAX_SERVER_RULES = 20_000
MAX_DOMAIN_CHARS = 253
# Operators sent to the search engine: engines cap a query's words (Google at 32), so past
# these only the filter after the search applies the rest.
ENGINE_ALLOW_MAX = 6
ENGINE_DENY_MAX = 8


class InvalidDomain(DomainError):
    """A domain rule (in settings, ``options.domains`` or a ``site:`` operator) is no domain."""

    kind = ErrorKind.INVALID
    title = "Invalid domain"
    code = "invalid_domain"


class DomainNotAllowed(DomainError):
    """A request's allow rule lies wholly outside the server's allow list (it could only widen)."""

    kind = ErrorKind.INVALID
    title = "Domain not allowed"
    code = "domain_not_allowed"


class NothingLeftToSearch(DomainError):
    """The query is only ``site:`` operators."""

    kind = ErrorKind.INVALID
    title = "Nothing to search"
    code = "empty_query"


def normalize(raw: str) -> str:
    """``raw`` as a rule: an A-label domain, ``*.`` in front for subdomains only.

    Raises:
        InvalidDomain: it is empty, a URL, carries a port, is an IP address or no valid name.
    """
    text = raw.strip().lower()
    shown = raw.strip()[:80]
    if not text:
        raise InvalidDomain("A domain rule is empty.")
    if len(text) > MAX_DOMAIN_CHARS + 2:
        raise InvalidDomain(f"{shown!r}… is longer than a domain name can be.")
    if "://" in text or "/" in text:
        raise InvalidDomain(
            f"{shown!r} is a URL, not a domain: write only its name, e.g. example.com."
        )
    wildcard = text.startswith("*.")
    base = text[2:] if wildcard else text
    base = base[:-1] if base.endswith(".") else base
    if "*" in base:
        raise InvalidDomain(
            f"{shown!r}: a wildcard may only open a rule (*.example.com: its subdomains)."
        )
    if _is_ip(base):
        raise InvalidDomain(f"{shown!r} is an IP address; domain rules name domains.")
    if ":" in base:
        raise InvalidDomain(f"{shown!r} carries a port; a domain rule names only the domain.")
    try:
        label = idna.encode(base, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as err:
        raise InvalidDomain(f"{shown!r} is not a valid domain name ({err}).") from None
    return f"*.{label}" if wildcard else label


def _is_ip(text: str) -> bool:
    if text[-1:].isalpha() and ":" not in text:  # the common case, without an exception
        return False
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def normalize_all(raws: Iterable[str], where: str, limit: int = MAX_RULES) -> tuple[str, ...]:
    """Each of ``raws`` normalized, duplicates dropped, order kept.

    Raises:
        InvalidDomain: one is invalid (the message says which and ``where`` it came from),
            or there are more than ``limit``.
    """
    out: dict[str, None] = {}
    for raw in raws:
        try:
            out[normalize(raw)] = None
        except InvalidDomain as err:
            raise InvalidDomain(f"{where}: {err.detail}") from None
    if len(out) > limit:
        raise InvalidDomain(f"{where}: at most {limit} domains.")
    return tuple(out)


def split_setting(value: str) -> list[str]:
    """A comma- or space-separated setting as its entries."""
    return [part for part in value.replace(",", " ").split() if part]


def host_of(url: str) -> str:
    """The URL's host as rules see it: lower-case A-labels, no port, no final dot ("" if none)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    # Browsers and URL libraries decode %-escapes in a host ("%65vil.test" is evil.test).
    host = unquote(host).lower().rstrip(".")
    if host.isascii():
        return host
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        return host


@dataclass(frozen=True)
class Rule:
    """One allow or deny rule and where it came from."""

    list: Literal["allow", "deny"]
    domain: str
    scope: Scope

    @property
    def base(self) -> str:
        """The domain without its ``*.``."""
        return self.domain.removeprefix("*.")

    @property
    def wildcard(self) -> bool:
        """True for ``*.example.com``: subdomains only."""
        return self.domain.startswith("*.")

    def __str__(self) -> str:
        origin = "site: operator" if self.scope == "query" else self.scope
        return f"{self.list} {self.domain} ({origin})"


class _Index:
    """Rules by domain: a host's verdict costs one lookup per label, not one test per rule
    (a server's deny list may hold thousands of domains)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._plain: dict[str, Rule] = {}
        self._wild: dict[str, Rule] = {}
        for rule in rules:
            (self._wild if rule.wildcard else self._plain).setdefault(rule.base, rule)

    def find(self, host: str) -> Rule | None:
        """The most specific rule matching ``host`` (a name from host_of), or None."""
        labels = host.split(".") if host else []
        for i in range(len(labels)):
            suffix = ".".join(labels[i:])
            if suffix in self._plain:
                return self._plain[suffix]
            if i > 0 and suffix in self._wild:
                return self._wild[suffix]
        return None


def _overlaps(a: str, b: str) -> bool:
    """Whether two rules' domains can match a common host (one is a label suffix of the other)."""
    a, b = a.removeprefix("*."), b.removeprefix("*.")
    return a == b or a.endswith("." + b) or b.endswith("." + a)


@dataclass(frozen=True)
class Drop:
    """A URL the policy dropped: at which stage, by which rule."""

    url: str
    host: str
    stage: Stage
    rule: str
    final_url: str = ""

    def as_json(self) -> dict[str, Any]:
        """The entry of a `policy` event."""
        out = {"url": self.url, "host": self.host, "stage": self.stage, "rule": self.rule}
        if self.final_url:
            out["final_url"] = self.final_url
        return out


@dataclass(frozen=True)
class DomainPolicy:
    """The rules one run applies; empty: every domain."""

    server_allow: tuple[Rule, ...] = ()
    server_deny: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()  # the request's and the query's
    deny: tuple[Rule, ...] = ()

    @property
    def active(self) -> bool:
        """True when any rule exists."""
        return bool(self.server_allow or self.server_deny or self.allow or self.deny)

    @cached_property
    def _index(self) -> tuple[_Index, _Index, _Index, _Index]:
        return (
            _Index(self.server_deny),
            _Index(self.deny),
            _Index(self.server_allow),
            _Index(self.allow),
        )

    def verdict(self, url: str) -> str | None:
        """The rule that drops ``url``, or None when it may be used (local documents always).
        The most specific matching rule is named; the server's deny list is asked first."""
        if url.startswith("local:"):
            return None
        host = host_of(url)
        if _is_ip(host):  # rules name domains: an address matches none (checked once, here)
            host = ""
        server_deny, deny, server_allow, allow = self._index
        rule = server_deny.find(host) or deny.find(host)
        if rule is not None:
            return str(rule)
        if self.server_allow and server_allow.find(host) is None:
            return "not on the server's allow list"
        if self.allow and allow.find(host) is None:
            return "not on the request's allow list"
        return None

    def check(self, url: str, stage: Stage, final_url: str = "") -> Drop | None:
        """A Drop when the policy refuses ``final_url`` (or ``url``), else None."""
        target = final_url or url
        rule = self.verdict(target)
        if rule is None:
            return None
        return Drop(url, host_of(target), stage, rule, final_url if final_url != url else "")

    def engine_operators(self) -> str:
        """What to add to a web query so the engine applies the rules itself (SearXNG and Brave
        pass ``site:`` / ``-site:`` to their engines): the narrowest allow list as ``site:a`` or
        ``site:a OR site:b``, and the deny rules as ``-site:d``. A wildcard deny cannot be said
        to an engine without dropping its domain too: only the filter applies it."""
        allow = self.allow or self.server_allow
        bases = list(dict.fromkeys(r.base for r in allow))
        parts: list[str] = []
        if 0 < len(bases) <= ENGINE_ALLOW_MAX:
            parts.append(" OR ".join(f"site:{b}" for b in bases))
        deny = [
            r.base
            for r in (*self.server_deny, *self.deny)
            if not r.wildcard and (not bases or any(_overlaps(r.base, b) for b in bases))
        ]
        parts += [f"-site:{d}" for d in list(dict.fromkeys(deny))[:ENGINE_DENY_MAX]]
        return " ".join(parts)

    def describe(self) -> dict[str, Any]:
        """The rules, for the `policy` event and the stored run."""
        return {
            "allow": [
                {"domain": r.domain, "scope": r.scope} for r in (*self.server_allow, *self.allow)
            ],
            "deny": [
                {"domain": r.domain, "scope": r.scope} for r in (*self.server_deny, *self.deny)
            ],
        }

    def request_rules(self) -> dict[str, list[str]]:
        """The request's and the query's rules (a stored research run keeps them; the server's
        are read again from the settings when it resumes)."""
        return {
            "allow": [r.domain for r in self.allow if r.scope == "request"],
            "deny": [r.domain for r in self.deny if r.scope == "request"],
            "site_allow": [r.domain for r in self.allow if r.scope == "query"],
            "site_deny": [r.domain for r in self.deny if r.scope == "query"],
        }


def _rules(
    kind: Literal["allow", "deny"], domains: Sequence[str], scope: Scope
) -> tuple[Rule, ...]:
    return tuple(Rule(kind, d, scope) for d in domains)


def build(
    *,
    server_allow: Sequence[str] = (),
    server_deny: Sequence[str] = (),
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    site_allow: Sequence[str] = (),
    site_deny: Sequence[str] = (),
    check: bool = True,
) -> DomainPolicy:
    """The policy of one run from normalized domains.

    Raises:
        DomainNotAllowed: ``check`` and a request allow rule matches nothing the server allows.
    """
    asked_allow = _rules("allow", allow, "request") + _rules("allow", site_allow, "query")
    asked_allow = tuple({r.domain: r for r in asked_allow}.values())
    for rule in asked_allow:
        if check and server_allow and not any(_overlaps(rule.domain, s) for s in server_allow):
            raise DomainNotAllowed(
                f"{rule.domain} ({'site: operator' if rule.scope == 'query' else 'request'}) is "
                "outside the server's allow list (ORCHESTRATOR_DOMAINS_ALLOW: "
                f"{', '.join(server_allow)}); a request can only narrow it."
            )
    asked_deny = _rules("deny", deny, "request") + _rules("deny", site_deny, "query")
    return DomainPolicy(
        server_allow=_rules("allow", server_allow, "server"),
        server_deny=_rules("deny", server_deny, "server"),
        allow=asked_allow,
        deny=tuple({r.domain: r for r in asked_deny}.values()),
    )
