"""``site:`` and ``-site:`` in a query, read as search engines read them, taken out of the text
the run searches and turned into domain rules (orchestrator/core/domains.py). Pure."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.core.domains import MAX_RULES, InvalidDomain, NothingLeftToSearch, normalize


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
