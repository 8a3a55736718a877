"""The shared URL check (quarry_common.urls): which refusals are malformed input and which are
aimed where no request may go, and the one switch a caller has (localhost). The hostile
spellings themselves are exercised through the reader
(services/reader/tests/unit/test_policy.py)."""

from __future__ import annotations

import ipaddress

import pytest
from quarry_common.urls import URLRefused, parse_http_url


@pytest.mark.parametrize(
    ("url", "blocked", "reason"),
    [
        ("", False, "empty URL"),
        ("http://exa\tmple.com/", False, "control character in URL"),
        ("http://example.com:99999/", False, "malformed URL"),
        ("example.com/hook", False, "not an absolute URL"),
        ("http://exa mple.com/", False, "invalid host"),
        ("http://example.com:0/", False, "port 0"),
        ("ftp://example.com/", True, "scheme 'ftp' not allowed"),
        ("http://user:pw@example.com/", True, "credentials in URL"),
        ("http://0x7f.1/", True, "non-canonical IP address"),
        ("http://api.localhost/", True, "localhost"),
    ],
)
def test_a_refusal_says_why_and_whether_it_is_malformed(
    url: str, blocked: bool, reason: str
) -> None:
    with pytest.raises(URLRefused) as refused:
        parse_http_url(url)
    assert (refused.value.blocked, refused.value.reason) == (blocked, reason)


def test_localhost_opens_only_when_the_caller_asks() -> None:
    with pytest.raises(URLRefused):
        parse_http_url("http://LOCALHOST:9/h")
    opened = parse_http_url("http://LOCALHOST:9/h", allow_localhost=True)
    assert (opened.host, opened.port, opened.ip) == ("localhost", 9, None)


def test_a_literal_address_is_handed_to_the_caller_and_names_are_ascii() -> None:
    literal = parse_http_url("https://[2606:4700::1111]:8443/a b?q=1#frag")
    assert literal.ip == ipaddress.ip_address("2606:4700::1111")
    assert literal.url == "https://[2606:4700::1111]:8443/a%20b?q=1"
    named = parse_http_url("http://Bücher.de./")
    assert (named.host, named.port, named.ip) == ("xn--bcher-kva.de", 80, None)
