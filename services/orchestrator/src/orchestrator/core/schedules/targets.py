"""Where a webhook may be sent: the reader's network policy, applied to outgoing notifications.

A webhook URL is given by a user, so it is a server-side request forgery vector like a page URL:
only http(s), no credentials in it, no localhost, and every address its host resolves to must
be public. Private, loopback, CGNAT and ULA addresses open only when the operator allows them
(ORCHESTRATOR_WEBHOOK_ALLOW_PRIVATE: a receiver on the LAN, or 127.0.0.1 in tests);
link-local (cloud metadata at 169.254.169.254), multicast, reserved and unspecified addresses
never do. The rules are the reader's own (quarry_common.addresses, one copy for every request
a user can aim); this module is pure: no DNS, no sockets.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from quarry_common.addresses import AddressPolicy, IPAddress

from orchestrator.core.schedules.errors import InvalidSchedule

__all__ = ["IPAddress", "WebhookURL", "parse_webhook_url", "refusal"]

MAX_URL_CHARS = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class WebhookURL:
    """A parsed webhook URL: the host to resolve (or the literal address) and the port."""

    url: str
    scheme: str
    host: str
    port: int
    ip: IPAddress | None


def _bad(reason: str) -> InvalidSchedule:
    return InvalidSchedule(f"The webhook URL is not allowed: {reason}.")


def parse_webhook_url(url: str, *, allow_private: bool) -> WebhookURL:
    """Validate a webhook URL as given (its host's addresses are checked when it is called).

    Raises:
        InvalidSchedule: not an absolute http(s) URL, credentials in it, localhost, or a
            literal address the policy refuses.
    """
    text = url.strip()
    if not text or len(text) > MAX_URL_CHARS or any(ord(c) < 0x21 or ord(c) == 0x7F for c in text):
        raise _bad("not a URL")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise _bad("malformed URL") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise _bad("only absolute http:// and https:// URLs")
    if "@" in parts.netloc:
        raise _bad("credentials in the URL (the signature authenticates the sender)")
    host = parts.hostname.lower().removesuffix(".")
    ip = _literal(host)
    if ip is None and (host == "localhost" or host.endswith(".localhost")) and not allow_private:
        raise _bad("localhost")
    if ip is not None:
        why = refusal(ip, allow_private=allow_private)
        if why:
            raise _bad(why)
    if port == 0:
        raise _bad("port 0")
    return WebhookURL(text, scheme, host, port or DEFAULT_PORTS[scheme], ip)


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def refusal(ip: IPAddress, *, allow_private: bool) -> str | None:
    """Why a webhook may not connect to ``ip`` (e.g. "a private address"), or None when it may."""
    why = AddressPolicy(allow_private=allow_private).reason(ip)
    return None if why is None else f"a {why}"
