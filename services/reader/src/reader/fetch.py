"""Fetch an untrusted URL under the address policy, with redirect, size and type limits.

The host is resolved once per hop; every resolved address must pass the policy, and the
connection goes to the address that was checked (a pinned httpcore network backend), so a
second DNS answer cannot switch it (DNS rebinding). TLS still verifies the hostname (SNI).
The overall deadline is the caller's: wrap :meth:`Fetcher.fetch` in ``asyncio.timeout``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import zlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import certifi
import httpcore

from reader.content import header_charset, kind_of, looks_binary, media_type, sniff
from reader.errors import ReadFailure
from reader.model import Kind, Status
from reader.policy import AddressPolicy, IPAddress, Target, parse_url, resolve_reference

Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1"
# Only what we can decode with a hard output cap (zlib's max_length); no br, no zstd.
_ACCEPT_ENCODING = "gzip, deflate"
# An HTML body cut short (stalled or dropped connection) is still extracted when at least this
# much arrived: a real page that slowed down, not a slow drip of a few bytes.
SALVAGE_MIN_BYTES = 16 * 1024
# TCP + TLS handshake limit per address: a host whose first address is a black hole (e.g. an
# AAAA record without IPv6 routing) still gets its next address within the 8 s budget.
CONNECT_TIMEOUT_S = 3.0
# Addresses tried per hop when connecting fails (e.g. an AAAA record without IPv6 routing).
_MAX_ADDRESSES = 3


@dataclass(frozen=True)
class Limits:
    """Per-request caps."""

    max_bytes: int
    max_redirects: int
    user_agent: str
    # Loop time by which body reading stops (keeping time to extract what arrived).
    read_until: float | None = None
    # A rendered page's sub-resource (script, JSON, frame): any content type, never salvaged.
    any_type: bool = False


@dataclass(frozen=True)
class Fetched:
    """A successfully fetched body (possibly cut at the byte cap)."""

    final_url: str
    http_status: int
    content_type: str
    kind: Kind
    body: bytes
    truncated: bool
    charset: str | None


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Resolve ``host`` with the system resolver; every address, in preference order."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise ReadFailure(Status.NETWORK_ERROR, "DNS lookup failed") from None
    return [ipaddress.ip_address(info[4][0]) for info in infos]


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to one vetted IP whatever host the URL names (TLS still uses the name)."""

    def __init__(self, ip: IPAddress) -> None:
        self._ip = str(ip)
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return await self._inner.connect_tcp(
            self._ip, port, timeout, local_address=local_address, socket_options=socket_options
        )

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Decoder:
    """Content-Encoding decoder whose output per call is capped (bombs stay bounded)."""

    def __init__(self, encoding: str) -> None:
        encoding = encoding.strip().lower()
        self._deflate = encoding == "deflate"
        self._started = False
        if encoding in ("", "identity"):
            self._z = None
        elif encoding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self._deflate:
            self._z = zlib.decompressobj()
        else:
            raise ReadFailure(Status.UNSUPPORTED, f"content encoding {encoding!r}")

    def feed(self, chunk: bytes, limit: int) -> bytes:
        """Decode ``chunk``, returning at most ``limit`` bytes (the rest is dropped)."""
        if self._z is None:
            return chunk[:limit]
        try:
            out = self._z.decompress(chunk, limit)
        except zlib.error:
            if self._deflate and not self._started:
                # Some servers send raw deflate without the zlib wrapper.
                self._z, self._deflate = zlib.decompressobj(-zlib.MAX_WBITS), False
                return self.feed(chunk, limit)
            raise ReadFailure(Status.NETWORK_ERROR, "corrupt compressed body") from None
        self._started = True
        return out


async def _read_body(
    response: httpcore.Response, decoder: _Decoder, limits: Limits
) -> tuple[bytes, bool, ReadFailure | None]:
    """Read up to the byte cap: (body, truncated, why it was cut short or None)."""
    body, raw = bytearray(), 0
    try:
        async with asyncio.timeout_at(limits.read_until):
            async for chunk in response.aiter_stream():
                raw += len(chunk)
                room = limits.max_bytes - len(body)
                out = decoder.feed(chunk, room + 1)
                body += out[:room]
                # Compressed bytes count too: a stream that inflates to nothing is endless too.
                if len(out) > room or raw > limits.max_bytes:
                    return bytes(body), True, None
    except TimeoutError:
        return bytes(body), True, ReadFailure(Status.TIMEOUT, "timed out")
    except (httpcore.ReadError, httpcore.RemoteProtocolError):
        return bytes(body), True, ReadFailure(Status.NETWORK_ERROR, "connection lost mid-body")
    return bytes(body), False, None


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1").strip()
    return ""


class Fetcher:
    """Fetches URLs under an :class:`AddressPolicy`."""

    def __init__(
        self,
        policy: AddressPolicy,
        resolver: Resolver = system_resolver,
        *,
        ca_file: str | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._extensions = {"timeout": {"connect": connect_timeout_s}}
        # Certificates are verified against the URL's host name even though the connection
        # goes to a pinned IP (httpcore passes the host as SNI/server_hostname).
        self._ssl = ssl.create_default_context(cafile=ca_file or certifi.where())
        self._ssl.minimum_version = ssl.TLSVersion.TLSv1_2

    async def _addresses(self, target: Target) -> list[IPAddress]:
        """Resolve (unless a literal) and vet every address; refuse if any is refused."""
        ips = (
            [target.ip] if target.ip is not None else await self._resolver(target.host, target.port)
        )
        if not ips:
            raise ReadFailure(Status.NETWORK_ERROR, "DNS lookup found no address")
        for ip in ips:
            self._policy.check(ip)
        return list(dict.fromkeys(ips))[:_MAX_ADDRESSES]

    async def fetch(self, url: str, limits: Limits) -> Fetched:
        """Fetch ``url``, following at most ``limits.max_redirects`` checked redirects."""
        target = parse_url(url)
        for _ in range(limits.max_redirects + 1):
            result = await self._hop(target, limits)
            if isinstance(result, Fetched):
                return result
            target = result
        raise ReadFailure(Status.HTTP_ERROR, "too many redirects")

    async def _hop(self, target: Target, limits: Limits) -> Fetched | Target:
        addresses = await self._addresses(target)
        for index, ip in enumerate(addresses):
            try:
                return await self._request(target, ip, limits)
            except (httpcore.ConnectError, httpcore.ConnectTimeout):
                if index == len(addresses) - 1:
                    raise ReadFailure(Status.NETWORK_ERROR, "connection failed") from None
            except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException):
                raise ReadFailure(Status.NETWORK_ERROR, "connection error") from None
        raise ReadFailure(Status.NETWORK_ERROR, "connection failed")  # pragma: no cover

    async def _request(self, target: Target, ip: IPAddress, limits: Limits) -> Fetched | Target:
        headers = [
            (b"Host", target.authority.encode("ascii")),
            (b"User-Agent", limits.user_agent.encode("latin-1", "replace")),
            (b"Accept", _ACCEPT.encode("ascii")),
            (b"Accept-Encoding", _ACCEPT_ENCODING.encode("ascii")),
        ]
        url = httpcore.URL(
            scheme=target.scheme.encode("ascii"),
            host=target.host.encode("ascii"),
            port=target.port,
            target=target.path.encode("ascii"),
        )
        async with (
            httpcore.AsyncConnectionPool(
                ssl_context=self._ssl, network_backend=_PinnedBackend(ip), max_connections=1
            ) as pool,
            pool.stream(b"GET", url, headers=headers, extensions=self._extensions) as response,
        ):
            status = response.status
            location = _header(response.headers, b"location")
            if status in _REDIRECTS and location:
                return resolve_reference(target, location)
            if not 200 <= status < 300:
                raise ReadFailure(Status.HTTP_ERROR, f"HTTP {status}", http_status=status)
            return await self._body(target, response, limits)

    async def _body(self, target: Target, response: httpcore.Response, limits: Limits) -> Fetched:
        content_type = _header(response.headers, b"content-type")
        if limits.any_type:
            return await self._resource(target, response, limits, content_type)
        kind = kind_of(content_type) if content_type else None
        if content_type and kind is None:
            raise ReadFailure(Status.UNSUPPORTED, f"content type {media_type(content_type)!r}")
        length = _header(response.headers, b"content-length")
        if kind is Kind.PDF and length.isdigit() and int(length) > limits.max_bytes:
            raise ReadFailure(Status.TOO_LARGE, "PDF larger than the byte cap")
        decoder = _Decoder(_header(response.headers, b"content-encoding"))
        data, truncated, cut = await _read_body(response, decoder, limits)
        kind = kind or sniff(data[:1024])
        if cut is not None and (
            len(data) < SALVAGE_MIN_BYTES or kind not in (Kind.HTML, Kind.TEXT)
        ):
            raise cut
        if kind is None:
            raise ReadFailure(Status.UNSUPPORTED, "unrecognised content")
        if kind is not Kind.PDF and looks_binary(data):
            raise ReadFailure(Status.UNSUPPORTED, "binary content")
        if kind is Kind.PDF and truncated:
            raise ReadFailure(Status.TOO_LARGE, "PDF larger than the byte cap")
        return Fetched(
            final_url=target.url,
            http_status=response.status,
            content_type=content_type or kind.value,
            kind=kind,
            body=data,
            truncated=truncated,
            charset=header_charset(content_type),
        )

    async def _resource(
        self, target: Target, response: httpcore.Response, limits: Limits, content_type: str
    ) -> Fetched:
        """A sub-resource of a rendered page: whole (under the cap) or refused."""
        decoder = _Decoder(_header(response.headers, b"content-encoding"))
        data, truncated, cut = await _read_body(response, decoder, limits)
        if cut is not None:
            raise cut
        if truncated:
            raise ReadFailure(Status.TOO_LARGE, "sub-resource larger than the byte cap")
        return Fetched(
            final_url=target.url,
            http_status=response.status,
            content_type=content_type,
            kind=kind_of(content_type) or Kind.TEXT,
            body=data,
            truncated=False,
            charset=header_charset(content_type),
        )
