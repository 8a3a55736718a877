"""URL validation and the address policy over hostile spellings."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reader.errors import ReadFailure
from reader.model import Status
from reader.policy import AddressPolicy, parse_url, resolve_reference

DEFAULT = AddressPolicy()


def _outcome(url: str, policy: AddressPolicy = DEFAULT) -> Status:
    """What the reader would do with ``url`` before any DNS lookup (literal IPs checked)."""
    try:
        target = parse_url(url)
        if target.ip is not None:
            policy.check(target.ip)
    except ReadFailure as failure:
        return failure.status
    return Status.OK


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://2130706433/",  # decimal 127.0.0.1
        "http://0x7f.1/",  # hex + short form
        "http://0x7f000001/",
        "http://0177.0.0.1/",  # octal
        "http://127.1/",
        "http://127.0.0.1./",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
        "http://[::ffff:7f00:1]/",
        "http://[0:0:0:0:0:ffff:127.0.0.1]/",
        "http://[::127.0.0.1]/",  # IPv4-compatible
        "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
        "http://[2002:a9fe:a9fe::]/",  # 6to4 of 169.254.169.254
        "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
        "http://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
        "http://[2001:0::1]/",  # Teredo
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",  # CGNAT
        "http://0.0.0.0/",
        "http://0/",
        "http://0.1.2.3/",
        "http://[::]/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://240.0.0.1/",
        "http://[fc00::1]/",
        "http://[ff02::1]/",
        "http://localhost/",
        "http://LOCALHOST:8080/",
        "http://api.localhost/",
        "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",  # full-width digits: 127.0.0.1
        "http://127\u30020\u30020\u30021/",  # ideographic full stops
        "http://user:pass@example.com/",
        "http://example.com@127.0.0.1/",
        "http://example.com\\@127.0.0.1/",
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://example.com/",
        "javascript:alert(1)",
        "data:text/html,hi",
    ],
)
def test_hostile_urls_are_refused(url: str) -> None:
    assert _outcome(url) in (Status.BLOCKED, Status.INVALID_URL)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "not a url",
        "/relative/path",
        "http://",
        "http:///path",
        "http://exa\tmple.com/",
        "http://example.com/\r\nX-Injected: 1",
        "http://example.com:99999/",
        "http://example.com:0/",
        "http://[::1/",
        "http://[fe80::1%25eth0]/",
        "http://%31%32%37.0.0.1/",
        "http://exa mple.com/",
        "http://a..b/",
        "http://" + "a" * 64 + ".com/",
        "http://example.com/" + "x" * 2048,
    ],
)
def test_malformed_urls_are_invalid(url: str) -> None:
    assert _outcome(url) is Status.INVALID_URL


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("HTTP://Example.COM", "http://example.com/"),
        ("https://example.com:443/a?b=c#frag", "https://example.com/a?b=c"),
        ("http://example.com:8080/a b", "http://example.com:8080/a%20b"),
        ("http://bücher.de/straße", "http://xn--bcher-kva.de/stra%C3%9Fe"),
        ("http://example.com./", "http://example.com/"),
        ("http://93.184.215.14/x", "http://93.184.215.14/x"),
        ("http://[2606:4700::1111]:8443/", "http://[2606:4700::1111]:8443/"),
        ("  https://example.com/  ", "https://example.com/"),
        ("http://cafe.be/", "http://cafe.be/"),  # hex-looking labels are names, not IPs
    ],
)
def test_public_urls_are_normalised(url: str, normalised: str) -> None:
    assert _outcome(url) is Status.OK
    assert parse_url(url).url == normalised


def test_redirects_resolve_relative_and_are_revalidated() -> None:
    base = parse_url("https://example.com/a/b")
    assert resolve_reference(base, "../c").url == "https://example.com/c"
    assert resolve_reference(base, "//other.org/x").url == "https://other.org/x"
    with pytest.raises(ReadFailure) as err:
        resolve_reference(base, "file:///etc/passwd")
    assert err.value.status is Status.BLOCKED


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("8.8.8.8", True),
        ("2606:4700::1111", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("169.254.169.254", False),
        ("::ffff:8.8.8.8", True),  # mapped public stays public
        ("2002:808:808::", True),  # 6to4 of a public address
        ("64:ff9b::808:808", True),
    ],
)
def test_default_policy(address: str, allowed: bool) -> None:
    assert (DEFAULT.reason(ipaddress.ip_address(address)) is None) is allowed


def test_private_networks_switch_opens_private_but_not_link_local() -> None:
    policy = AddressPolicy(allow_private=True)
    for open_ in ("127.0.0.1", "10.0.0.1", "192.168.0.10", "100.64.1.1", "fd00::1", "::1"):
        assert policy.reason(ipaddress.ip_address(open_)) is None, open_
    for closed in ("169.254.169.254", "fe80::1", "0.0.0.0", "224.0.0.251", "ff02::1"):
        assert policy.reason(ipaddress.ip_address(closed)) is not None, closed


def test_allow_list_opens_exactly_the_listed_cidrs() -> None:
    policy = AddressPolicy(allowed=[ipaddress.ip_network("127.0.0.1/32")])
    assert policy.reason(ipaddress.ip_address("127.0.0.1")) is None
    assert policy.reason(ipaddress.ip_address("::ffff:127.0.0.1")) is None  # same host
    assert policy.reason(ipaddress.ip_address("127.0.0.2")) == "private address"
    assert policy.reason(ipaddress.ip_address("169.254.169.254")) is not None


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        st.builds(
            lambda scheme, host, rest: f"{scheme}://{host}{rest}",
            st.sampled_from(["http", "https", "HTTP", "ftp", ""]),
            st.one_of(
                st.text(max_size=40), st.from_regex(r"[a-zA-Z0-9.:\[\]-]{1,30}", fullmatch=True)
            ),
            st.one_of(
                st.text(max_size=60), st.from_regex(r"(/[a-z0-9 %?=&#]{0,12}){0,4}", fullmatch=True)
            ),
        ),
    )
)
def test_any_input_is_a_target_or_a_read_failure(url: str) -> None:
    status = _outcome(url, AddressPolicy(allow_private=True))
    assert status in (Status.OK, Status.BLOCKED, Status.INVALID_URL)
    if status is Status.OK:
        # Normalisation is idempotent and yields plain ASCII.
        target = parse_url(url)
        assert parse_url(target.url) == target
        assert target.url.isascii()
