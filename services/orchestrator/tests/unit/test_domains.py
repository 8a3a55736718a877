"""The domain policy's parser and matcher (orchestrator/core/domains.py) and its entry point
(policy.domains_for): rules, site: operators, the verdict on a URL, the engine's operators."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from orchestrator.api.shared.options import SearchOptions
from orchestrator.config import Settings
from orchestrator.core.ask.service import prepare
from orchestrator.core.domains import (
    DomainNotAllowed,
    DomainPolicy,
    InvalidDomain,
    NothingLeftToSearch,
    build,
    host_of,
    normalize,
)
from orchestrator.core.policy import SearchOff, domains_for, stored_domains
from orchestrator.core.site_query import parse_query
from pydantic import ValidationError


@dataclass(frozen=True)
class Lists:
    domains_allow: str = ""
    domains_deny: str = ""


# --- rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ("example.com", "example.com"),
        ("  Example.COM ", "example.com"),
        ("example.com.", "example.com"),
        ("*.example.com", "*.example.com"),
        ("*.EXAMPLE.com.", "*.example.com"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("BÜCHER.example", "xn--bcher-kva.example"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("*.bücher.example", "*.xn--bcher-kva.example"),
        ("localhost", "localhost"),
        ("com", "com"),
    ],
)
def test_normalize_accepts_domains(raw: str, rule: str) -> None:
    assert normalize(raw) == rule


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("https://example.com/page", "is a URL"),
        ("example.com/path", "is a URL"),
        ("example.com:8080", "carries a port"),
        ("127.0.0.1", "IP address"),
        ("[::1]", "IP address"),
        ("::1", "IP address"),
        ("ex*ample.com", "wildcard"),
        ("*", "wildcard"),
        ("*.*.example.com", "wildcard"),
        ("example..com", "not a valid domain"),
        ("-bad.com", "not a valid domain"),
        ("under_score.com", "not a valid domain"),
        ("two words.com", "not a valid domain"),
        ("a" * 64 + ".com", "not a valid domain"),
        ("a." * 200 + "com", "longer than a domain"),
    ],
)
def test_normalize_refuses_what_is_no_domain(raw: str, says: str) -> None:
    with pytest.raises(InvalidDomain, match=says) as caught:
        normalize(raw)
    assert caught.value.code == "invalid_domain"


# --- the matcher -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Docs.Example.COM/a?b#c", "docs.example.com"),
        ("http://example.com:8080/x", "example.com"),
        ("http://example.com./x", "example.com"),
        ("https://bücher.example/x", "xn--bcher-kva.example"),
        ("https://user:pw@example.com/", "example.com"),
        ("http://[::1]:80/", "::1"),
        ("http://%65vil.TEST./x", "evil.test"),
        ("not a url", ""),
        ("http://[broken/", ""),
    ],
)
def test_host_of(url: str, host: str) -> None:
    assert host_of(url) == host


def deny(*domains: str) -> DomainPolicy:
    return build(deny=[normalize(d) for d in domains])


def allow(*domains: str) -> DomainPolicy:
    return build(allow=[normalize(d) for d in domains])


@pytest.mark.parametrize(
    ("rule", "url", "matches"),
    [
        ("example.com", "https://example.com/", True),
        ("example.com", "https://docs.example.com/", True),
        ("example.com", "https://a.b.example.com/", True),
        ("example.com", "https://notexample.com/", False),  # a label boundary, not a substring
        ("example.com", "https://example.com.evil.org/", False),
        ("example.com", "https://example.co/", False),
        ("*.example.com", "https://example.com/", False),  # only subdomains
        ("*.example.com", "https://docs.example.com/", True),
        ("docs.example.com", "https://example.com/", False),
        ("example.com", "http://EXAMPLE.com:8443/x", True),  # case and port do not matter
        ("bücher.example", "https://xn--bcher-kva.example/", True),  # IDN either way round
        ("xn--bcher-kva.example", "https://www.bücher.example/", True),
        ("example.com", "http://127.0.0.1/", False),
    ],
)
def test_a_rule_matches_its_domain_and_subdomains(rule: str, url: str, matches: bool) -> None:
    assert (deny(rule).verdict(url) is not None) is matches
    assert (allow(rule).verdict(url) is None) is matches


def test_local_documents_are_never_judged() -> None:
    policy = build(server_allow=["example.com"], deny=["corpus"])
    assert policy.verdict("local:notes/corpus.md") is None


def test_server_deny_wins_over_the_request_allow() -> None:
    policy = build(server_deny=["evil.test"], allow=["evil.test", "good.test"])
    assert policy.verdict("http://evil.test/x") == "deny evil.test (server)"
    assert policy.verdict("http://good.test/x") is None
    assert policy.verdict("http://other.test/x") == "not on the request's allow list"


def test_a_request_narrows_the_server_allow_list_and_never_widens_it() -> None:
    policy = build(server_allow=["good.test"], allow=["docs.good.test"])
    assert policy.verdict("http://docs.good.test/") is None
    assert policy.verdict("http://blog.good.test/") == "not on the request's allow list"
    assert policy.verdict("http://other.test/") == "not on the server's allow list"
    # a request allow wider than the server's still admits only what the server allows
    wider = build(server_allow=["docs.good.test"], allow=["good.test"])
    assert wider.verdict("http://blog.good.test/") == "not on the server's allow list"
    with pytest.raises(DomainNotAllowed, match="outside the server's allow list"):
        build(server_allow=["good.test"], allow=["other.test"])


def test_a_drop_names_the_final_url_of_a_redirect() -> None:
    drop = deny("evil.test").check("http://good.test/moved", "redirect", "http://evil.test/x")
    assert drop is not None
    assert drop.as_json() == {
        "url": "http://good.test/moved",
        "host": "evil.test",
        "stage": "redirect",
        "rule": "deny evil.test (request)",
        "final_url": "http://evil.test/x",
    }
    assert deny("evil.test").check("http://good.test/moved", "redirect", "http://ok.test/") is None


def test_engine_operators() -> None:
    assert DomainPolicy().engine_operators() == ""
    assert deny("evil.test", "*.ads.test").engine_operators() == "-site:evil.test"
    assert allow("*.docs.test").engine_operators() == "site:docs.test"
    assert allow("a.test", "b.test").engine_operators() == "site:a.test OR site:b.test"
    # a deny inside the allowed domain narrows it; one outside it says nothing new
    both = build(allow=["good.test"], deny=["blog.good.test", "evil.test"])
    assert both.engine_operators() == "site:good.test -site:blog.good.test"
    # the request's allow list is the narrower one
    narrowed = build(server_allow=["good.test", "other.test"], allow=["docs.good.test"])
    assert narrowed.engine_operators() == "site:docs.good.test"
    many = allow(*(f"d{i}.test" for i in range(10)))
    assert "site:" not in many.engine_operators()  # too many for an engine: the filter only


# --- site: operators ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "text", "allowed", "denied"),
    [
        ("tides site:example.org", "tides", ("example.org",), ()),
        ("site:example.org tides -site:evil.org", "tides", ("example.org",), ("evil.org",)),
        ("SITE:Example.ORG tides", "tides", ("example.org",), ()),
        ("-Site:evil.org tides", "tides", (), ("evil.org",)),
        ('tides site:"example.org"', "tides", ("example.org",), ()),
        ("tides site:*.example.org", "tides", ("*.example.org",), ()),
        ("tides site:bücher.example", "tides", ("xn--bcher-kva.example",), ()),
        ("tides site:a.org site:a.org", "tides", ("a.org",), ()),
        # inside a quoted phrase it is text, as engines read it
        ('"site:example.org is a phrase" tides', '"site:example.org is a phrase" tides', (), ()),
        # a bare operator, other operators and words merely containing site: are text
        ("what does site: mean", "what does site: mean", (), ()),
        ("website:foo tides", "website:foo tides", (), ()),
        ("tides inurl:x", "tides inurl:x", (), ()),
        ("  spaced   out  query ", "  spaced   out  query ", (), ()),
        ("spaced   site:a.org  out", "spaced out", ("a.org",), ()),
    ],
)
def test_parse_query(
    query: str, text: str, allowed: tuple[str, ...], denied: tuple[str, ...]
) -> None:
    parsed = parse_query(query)
    assert (parsed.text, parsed.allow, parsed.deny) == (text, allowed, denied)


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("tides site:example.org:8080", "carries a port"),
        ("tides site:https://example.org/", "is a URL"),
        ("tides -site:127.0.0.1", "IP address"),
        ("tides site:bad_name.org", "not a valid domain"),
    ],
)
def test_parse_query_refuses_bad_operators(query: str, says: str) -> None:
    with pytest.raises(InvalidDomain, match=says) as caught:
        parse_query(query)
    assert "In the query's" in caught.value.detail


def test_a_query_with_too_many_operators_is_refused() -> None:
    query = "tides " + " ".join(f"-site:d{i}.test" for i in range(101))
    with pytest.raises(InvalidDomain, match="more than 100 site: operators"):
        parse_query(query)


def test_a_query_of_operators_only_is_refused() -> None:
    with pytest.raises(NothingLeftToSearch, match="only site: operators"):
        parse_query("site:example.org -site:evil.org")


# --- the entry point ---------------------------------------------------------------------


def test_domains_for_combines_server_request_and_query() -> None:
    server = Lists(domains_allow="good.test, other.test", domains_deny="evil.test")
    text, policy = domains_for(
        "tides site:docs.good.test -site:blog.good.test", {"deny": ["Spam.TEST"]}, server
    )
    assert text == "tides"
    assert policy.describe() == {
        "allow": [
            {"domain": "good.test", "scope": "server"},
            {"domain": "other.test", "scope": "server"},
            {"domain": "docs.good.test", "scope": "query"},
        ],
        "deny": [
            {"domain": "evil.test", "scope": "server"},
            {"domain": "spam.test", "scope": "request"},
            {"domain": "blog.good.test", "scope": "query"},
        ],
    }
    assert policy.verdict("http://blog.good.test/") == "deny blog.good.test (site: operator)"
    # a stored run's rules come back whole under the server's lists of the day
    again = stored_domains(policy.request_rules(), Lists(domains_deny="docs.good.test"))
    assert again.verdict("http://docs.good.test/") == "deny docs.good.test (server)"


def test_domains_for_names_the_bad_entry() -> None:
    with pytest.raises(InvalidDomain, match=r"options.domains.deny: 'http://x.org/' is a URL"):
        domains_for("tides", {"deny": ["ok.org", "http://x.org/"]}, Lists())
    with pytest.raises(InvalidDomain, match="at most 100"):
        domains_for("tides", {"allow": [f"d{i}.test" for i in range(101)]}, Lists())
    with pytest.raises(DomainNotAllowed, match="site: operator"):
        domains_for("tides site:other.test", None, Lists(domains_allow="good.test"))


def test_settings_validate_and_normalize_the_server_lists() -> None:
    settings = Settings(domains_allow="Good.TEST  *.docs.test,bücher.example")
    assert settings.domains_allow == "good.test,*.docs.test,xn--bcher-kva.example"
    with pytest.raises(ValidationError, match="domains_deny"):
        Settings(domains_deny="good.test, http://evil.test/")


def test_ask_prepare_takes_the_operators_out_of_the_question() -> None:
    settings = Settings(searxng_url="http://127.0.0.1:9", domains_deny="evil.test")
    searched, options = prepare("tides -site:spam.test", None, settings, {"allow": ["ok.test"]})
    assert searched == "tides"
    assert options.sources == ("web",)
    assert options.domains.verdict("http://spam.test/") == "deny spam.test (site: operator)"
    assert options.domains.verdict("http://evil.test/") == "deny evil.test (server)"
    assert options.domains.verdict("http://ok.test/") is None
    off = Settings(searxng_url="http://127.0.0.1:9", web_search="off")
    with pytest.raises(SearchOff):  # the sources policy still refuses first
        prepare("tides site:ok.test", SearchOptions(sources=["web"]), off, None)


def test_the_most_specific_rule_is_named_and_big_server_lists_work() -> None:
    policy = build(deny=["example.com", "*.docs.example.com"])
    assert policy.verdict("http://a.docs.example.com/") == "deny *.docs.example.com (request)"
    assert policy.verdict("http://docs.example.com/") == "deny example.com (request)"
    assert policy.verdict("http://www.example.com/") == "deny example.com (request)"
    blocklist = ",".join(f"d{i}.test" for i in range(20_000))
    settings = Settings(domains_deny=blocklist)
    _, big = domains_for("tides", None, settings)
    assert big.verdict("http://ads.d19999.test/") == "deny d19999.test (server)"
    assert big.verdict("http://d20000.test/") is None
    with pytest.raises(ValidationError, match="at most 20000 domains"):
        Settings(domains_deny=blocklist + ",one-more.test")
