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
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import idna

from orchestrator.errors import DomainError, ErrorKind

Scope = Literal["server", "request", "query"]
Stage = Literal["search", "result", "redirect"]

# Rules per list and request: more is a mistake (or an attack on the matcher), not a policy.
MAX_RULES = 100
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
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def normalize_all(raws: Iterable[str], where: str) -> tuple[str, ...]:
    """Each of ``raws`` normalized, duplicates dropped, order kept.

    Raises:
        InvalidDomain: one is invalid (the message says which and ``where`` it came from),
            or there are more than MAX_RULES.
    """
    out: dict[str, None] = {}
    for raw in raws:
        try:
            out[normalize(raw)] = None
        except InvalidDomain as err:
            raise InvalidDomain(f"{where}: {err.detail}") from None
    if len(out) > MAX_RULES:
        raise InvalidDomain(f"{where}: at most {MAX_RULES} domains.")
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

    def matches(self, host: str) -> bool:
        """Whether ``host`` (from host_of) falls under this rule (label-wise suffix match)."""
        if not host or _is_ip(host):
            return False
        if host.endswith("." + self.base):
            return True
        return host == self.base and not self.wildcard

    def __str__(self) -> str:
        origin = "site: operator" if self.scope == "query" else self.scope
        return f"{self.list} {self.domain} ({origin})"


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

    def rules(self) -> list[Rule]:
        """Every rule, the server's first."""
        return [*self.server_deny, *self.server_allow, *self.deny, *self.allow]

    def verdict(self, url: str) -> str | None:
        """The rule that drops ``url``, or None when it may be used (local documents always)."""
        if url.startswith("local:"):
            return None
        host = host_of(url)
        for rule in (*self.server_deny, *self.deny):
            if rule.matches(host):
                return str(rule)
        if self.server_allow and not any(r.matches(host) for r in self.server_allow):
            return "not on the server's allow list"
        if self.allow and not any(r.matches(host) for r in self.allow):
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


@dataclass(frozen=True)
class SiteQuery:
    """A query with its ``site:`` operators taken out."""

    text: str
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def _tokens(query: str) -> list[str]:
    """Whitespace-separated tokens; a double-quoted phrase stays one token (quotes kept)."""
    tokens: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in query:
        if ch == '"':
            quoted = not quoted
        if ch.isspace() and not quoted:
            if current:
                tokens.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        tokens.append("".join(current))
    return tokens


def _operator(token: str) -> tuple[bool, str] | None:
    """(deny, value) when ``token`` is ``site:x`` or ``-site:x`` (any case, value maybe
    quoted); None for anything else: a quoted phrase, a bare ``site:``, ordinary words."""
    deny = token.startswith("-")
    body = token[1:] if deny else token
    if body[:5].lower() != "site:":
        return None
    value = body[5:].strip('"').strip()
    return (deny, value) if value else None


def parse_query(query: str) -> SiteQuery:
    """Take ``site:example.org`` and ``-site:example.org`` out of ``query``, as search engines
    read them: outside double quotes, the operator in any case, the domain maybe quoted. The
    rest (its words in order, phrases kept) is what is searched.

    Raises:
        InvalidDomain: an operator's domain is not a domain.
        NothingLeftToSearch: the query is nothing but operators.
    """
    rest: list[str] = []
    allow: list[str] = []
    deny: list[str] = []
    for token in _tokens(query):
        found = _operator(token)
        if found is None:
            rest.append(token)
            continue
        is_deny, value = found
        try:
            domain = normalize(value)
        except InvalidDomain as err:
            raise InvalidDomain(f"In the query's {token!r}: {err.detail}") from None
        (deny if is_deny else allow).append(domain)
    if len(allow) + len(deny) > MAX_RULES:
        raise InvalidDomain(f"The query has more than {MAX_RULES} site: operators.")
    if (allow or deny) and not rest:
        raise NothingLeftToSearch(
            "The query has only site: operators; add what to search for, e.g. "
            "'site:example.org release notes'."
        )
    text = " ".join(rest) if (allow or deny) else query
    return SiteQuery(text, tuple(dict.fromkeys(allow)), tuple(dict.fromkeys(deny)))
