"""Fetcher against a loopback server, with a resolver double standing in for DNS."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from reader.errors import ReadFailure
from reader.fetch import Fetcher, Limits
from reader.model import Kind, Status
from reader.policy import AddressPolicy, IPAddress

from services.reader.tests.pages import ARTICLE, HttpServer, fixed, status

LOOPBACK = ipaddress.ip_address("127.0.0.1")
LIMITS = Limits(max_bytes=1_000_000, max_redirects=5, user_agent="QuarryTest/1.0")


class Dns:
    """Answers like a resolver: name -> addresses; records every lookup."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.lookups.append(host)
        if host not in self.answers:
            raise ReadFailure(Status.NETWORK_ERROR, "DNS lookup failed")
        return [ipaddress.ip_address(a) for a in self.answers[host]]


@pytest_asyncio.fixture
async def web() -> AsyncIterator[HttpServer]:
    async with HttpServer({"/article": fixed(ARTICLE)}) as server:
        server.routes["/to-name"] = status(302, "Found", server.url("/article", "rebind.test"))
        yield server


def _fetcher(dns: Dns) -> Fetcher:
    return Fetcher(AddressPolicy(allowed=[ipaddress.ip_network("127.0.0.1/32")]), dns)


async def test_connects_to_the_vetted_address_and_keeps_the_host_name(web: HttpServer) -> None:
    dns = Dns({"article.test": ["127.0.0.1"]})
    fetched = await _fetcher(dns).fetch(web.url("/article", "article.test"), LIMITS)
    assert fetched.kind is Kind.HTML
    assert fetched.body == ARTICLE
    assert fetched.final_url == web.url("/article", "article.test")
    assert web.requests[-1][1]["host"] == f"article.test:{web.port}"
    assert dns.lookups == ["article.test"]


async def test_any_refused_address_blocks_the_name(web: HttpServer) -> None:
    # A public and a private answer together: refusing only one would let rebinding win.
    dns = Dns({"mixed.test": ["93.184.215.14", "10.0.0.7"]})
    with pytest.raises(ReadFailure) as err:
        await _fetcher(dns).fetch(web.url("/article", "mixed.test"), LIMITS)
    assert err.value.status is Status.BLOCKED
    assert web.requests == []


async def test_each_redirect_hop_is_resolved_and_checked(web: HttpServer) -> None:
    # The second hop's name resolves to a metadata address: blocked before connecting.
    dns = Dns({"rebind.test": ["169.254.169.254"]})
    with pytest.raises(ReadFailure) as err:
        await _fetcher(dns).fetch(web.url("/to-name"), LIMITS)
    assert err.value.status is Status.BLOCKED
    assert dns.lookups == ["rebind.test"]
    assert [path for path, _ in web.requests] == ["/to-name"]


async def test_unknown_name_is_a_network_error(web: HttpServer) -> None:
    with pytest.raises(ReadFailure) as err:
        await _fetcher(Dns({})).fetch("http://nowhere.test/", LIMITS)
    assert err.value.status is Status.NETWORK_ERROR


async def test_refused_connection_is_a_network_error() -> None:
    async with HttpServer({}) as closed:
        port = closed.port
    with pytest.raises(ReadFailure) as err:
        await _fetcher(Dns({})).fetch(f"http://127.0.0.1:{port}/", LIMITS)
    assert err.value.status is Status.NETWORK_ERROR


async def test_zero_redirects_allowed_means_none_followed(web: HttpServer) -> None:
    limits = Limits(max_bytes=1000, max_redirects=0, user_agent="x")
    with pytest.raises(ReadFailure) as err:
        await _fetcher(Dns({})).fetch(web.url("/to-name"), limits)
    assert err.value.status is Status.HTTP_ERROR


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest_asyncio.fixture
async def tls_web() -> AsyncIterator[HttpServer]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(FIXTURES / "secure.test.pem", FIXTURES / "secure.test.key")
    async with HttpServer({"/article": fixed(ARTICLE)}, tls=context) as server:
        yield server


def _tls_fetcher(dns: Dns) -> Fetcher:
    policy = AddressPolicy(allowed=[ipaddress.ip_network("127.0.0.1/32")])
    return Fetcher(policy, dns, ca_file=str(FIXTURES / "ca.pem"))


async def test_tls_verifies_the_host_name_while_connecting_to_the_pinned_ip(
    tls_web: HttpServer,
) -> None:
    dns = Dns({"secure.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    fetched = await _tls_fetcher(dns).fetch(tls_web.url("/article", "secure.test"), LIMITS)
    assert fetched.body == ARTICLE
    assert fetched.final_url.startswith("https://secure.test:")
    # Same address, but the certificate is not for this name: refused, not trusted by IP.
    with pytest.raises(ReadFailure) as err:
        await _tls_fetcher(dns).fetch(tls_web.url("/article", "other.test"), LIMITS)
    assert err.value.status is Status.NETWORK_ERROR


async def test_tls_with_an_untrusted_ca_is_refused(tls_web: HttpServer) -> None:
    dns = Dns({"secure.test": ["127.0.0.1"]})
    policy = AddressPolicy(allowed=[ipaddress.ip_network("127.0.0.1/32")])
    with pytest.raises(ReadFailure) as err:
        await Fetcher(policy, dns).fetch(tls_web.url("/article", "secure.test"), LIMITS)
    assert err.value.status is Status.NETWORK_ERROR


async def test_unresponsive_first_address_falls_through_to_the_next(tls_web: HttpServer) -> None:
    # 127.0.0.2 accepts TCP on the same port but never answers the TLS handshake.
    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    black_hole = await asyncio.start_server(hang, "127.0.0.2", tls_web.port)
    try:
        dns = Dns({"secure.test": ["127.0.0.2", "127.0.0.1"]})
        policy = AddressPolicy(allowed=[ipaddress.ip_network("127.0.0.0/8")])
        fetcher = Fetcher(policy, dns, ca_file=str(FIXTURES / "ca.pem"), connect_timeout_s=0.3)
        fetched = await fetcher.fetch(tls_web.url("/article", "secure.test"), LIMITS)
        assert fetched.body == ARTICLE
    finally:
        black_hole.close()
