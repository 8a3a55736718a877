"""The syntax of a URL a user may aim a server-side request at: one check for every such request
(the reader's page fetches, the orchestrator's webhooks), beside the address rules
(quarry_common.addresses) that apply once the host is known.

Only absolute http(s) URLs with a host, no credentials, no localhost, and no host a URL parser
and the resolver could read differently (IDNA is applied here; numeric hosts must be a canonical
dotted quad, since "2130706433" or "0x7f.1" reach 127.0.0.1 through inet_aton). Pure: no DNS,
no sockets; a literal address is returned for the caller's address policy to judge.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from quarry_common.addresses import IPAddress

__all__ = ["DEFAULT_PORTS", "MAX_URL_LENGTH", "HttpURL", "URLRefused", "parse_http_url"]

MAX_URL_LENGTH = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}

# ASCII control characters (incl. tab/CR/LF, which URL parsers silently drop).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# What an ASCII (post-IDNA) host name may contain.
_HOSTNAME = re.compile(r"^[a-z0-9_.-]+$")
# A label that makes a WHATWG URL parser (and inet_aton) read the host as IPv4: decimal,
# or 0x-hex (e.g. the last label of "0x7f.1" or "2130706433").
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
# Characters kept as-is when re-quoting a path or query (RFC 3986 reserved + unreserved + %).
_SAFE_PATH = "/%:@!$&'()*+,;=-._~"
_SAFE_QUERY = _SAFE_PATH + "?"


class URLRefused(ValueError):
    """A URL no request may be aimed at, and why (``reason``, e.g. "credentials in URL").

    ``blocked`` is True when the URL is well-formed but points where requests may not go
    (another scheme, credentials, localhost, an ambiguous numeric host); False when it is
    malformed. The reader reports the two apart (BLOCKED vs INVALID_URL).
    """

    def __init__(self, reason: str, *, blocked: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.blocked = blocked


@dataclass(frozen=True)
class HttpURL:
    """A checked http(s) URL, normalised: ASCII host, explicit port, no fragment.

    ``host`` is lower-case, IDNA-encoded, without a trailing dot (an IPv6 literal without its
    brackets); ``path`` is the percent-encoded path plus query; ``ip`` is the literal address
    when the host is one (for the caller's address policy), else None (resolve ``host``).
    """

    scheme: str
    host: str
    port: int
    path: str
    ip: IPAddress | None

    @property
    def authority(self) -> str:
        """Host (bracketed when IPv6) plus the port when it is not the scheme's default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if DEFAULT_PORTS[self.scheme] == self.port else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        """The normalised URL string."""
        return f"{self.scheme}://{self.authority}{self.path}"


def _invalid(reason: str) -> URLRefused:
    return URLRefused(reason, blocked=False)


def _blocked(reason: str) -> URLRefused:
    return URLRefused(reason, blocked=True)


def _ascii_host(raw: str) -> str:
    """Lower-case, IDNA-encode and strip one trailing dot; raise on impossible hosts."""
    try:
        host = raw.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise _invalid("invalid host") from None
    host = host.removesuffix(".")
    if not _HOSTNAME.match(host) or ".." in host:
        raise _invalid("invalid host")
    return host


def _literal_ip(host: str, bracketed: bool) -> IPAddress | None:
    """Return the IP a literal host denotes; refuse non-canonical numeric spellings."""
    if bracketed:
        if "%" in host:
            raise _invalid("scoped IPv6 literal")
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            raise _invalid("invalid IPv6 literal") from None
    if _NUMERIC_LABEL.match(host.rsplit(".", 1)[-1]):
        try:
            # Only the canonical dotted quad: 3.11's parser refuses octal/hex/short forms.
            return ipaddress.IPv4Address(host)
        except ValueError:
            raise _blocked("non-canonical IP address") from None
    return None


def parse_http_url(url: str, *, allow_localhost: bool = False) -> HttpURL:
    """Check ``url`` (surrounding whitespace ignored) as an absolute http(s) URL.

    ``allow_localhost`` lets the name localhost (and *.localhost) through, for a caller whose
    operator opened loopback addresses (webhooks with ORCHESTRATOR_WEBHOOK_ALLOW_PRIVATE).

    Raises:
        URLRefused: malformed, or aimed where no request may go (see its ``blocked``).
    """
    url = url.strip()
    if not url or len(url) > MAX_URL_LENGTH:
        raise _invalid("empty URL" if not url else "URL too long")
    if _CONTROL.search(url):
        raise _invalid("control character in URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise _invalid("malformed URL") from None
    scheme = parts.scheme.lower()
    if scheme and scheme not in DEFAULT_PORTS:
        raise _blocked(f"scheme {scheme!r} not allowed")
    if not scheme or not parts.netloc:
        raise _invalid("not an absolute URL")
    if "@" in parts.netloc:
        raise _blocked("credentials in URL")
    if not parts.hostname:
        raise _invalid("missing host")
    bracketed = parts.netloc.startswith("[")
    host = parts.hostname.lower() if bracketed else _ascii_host(parts.hostname)
    ip = _literal_ip(host, bracketed)
    if (host == "localhost" or host.endswith(".localhost")) and not allow_localhost:
        raise _blocked("localhost")
    path = quote(parts.path, safe=_SAFE_PATH) or "/"
    if parts.query:
        path += "?" + quote(parts.query, safe=_SAFE_QUERY)
    if port == 0:
        raise _invalid("port 0")
    return HttpURL(scheme, host, port or DEFAULT_PORTS[scheme], path, ip)
