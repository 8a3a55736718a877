"""Where a webhook may be sent: the reader's network policy, applied to outgoing notifications.

A webhook URL is given by a user, so it is a server-side request forgery vector like a page URL:
only http(s), no credentials in it, no localhost, and every address its host resolves to must
be public. Private, loopback, CGNAT and ULA addresses open only when the operator allows them
(ORCHESTRATOR_WEBHOOK_ALLOW_PRIVATE: a receiver on the LAN, or 127.0.0.1 in tests);
link-local (cloud metadata at 169.254.169.254), multicast, reserved and unspecified addresses
never do. The rules are the reader's own (quarry_common.urls for the syntax,
quarry_common.addresses for the addresses: one copy for every request a user can aim); this
module is pure: no DNS, no sockets.
"""

from __future__ import annotations

from dataclasses import dataclass

from quarry_common.addresses import AddressPolicy, IPAddress
from quarry_common.urls import URLRefused, parse_http_url

from orchestrator.core.schedules.errors import InvalidSchedule

__all__ = ["IPAddress", "WebhookURL", "parse_webhook_url", "refusal"]


@dataclass(frozen=True)
class WebhookURL:
    """A checked webhook URL: as given (it is stored and sent as the user wrote it), the host to
    resolve (ASCII, for DNS and TLS SNI) or the literal address, and the port."""

    url: str
    scheme: str
    host: str
    port: int
    ip: IPAddress | None


def _bad(reason: str) -> InvalidSchedule:
    return InvalidSchedule(f"The webhook URL is not allowed: {reason}.")


def parse_webhook_url(url: str, *, allow_private: bool) -> WebhookURL:
    """Validate a webhook URL as given (its host's addresses are checked when it is called).

    The syntax is the reader's (quarry_common.urls, one check for every request a user can
    aim); two differences are the webhook's own: the name localhost opens with private
    addresses (a receiver on this machine is what ORCHESTRATOR_WEBHOOK_ALLOW_PRIVATE is for),
    and a space is refused rather than percent-encoded (the URL is kept and sent as written,
    not normalised like a page URL, so it must already be one).

    Raises:
        InvalidSchedule: not an absolute http(s) URL, credentials in it, localhost, or a
            literal address the policy refuses.
    """
    text = url.strip()
    if " " in text:
        raise _bad("not a URL")
    try:
        parsed = parse_http_url(text, allow_localhost=allow_private)
    except URLRefused as refused:
        raise _bad(refused.reason) from None
    if parsed.ip is not None:
        why = refusal(parsed.ip, allow_private=allow_private)
        if why:
            raise _bad(why)
    return WebhookURL(text, parsed.scheme, parsed.host, parsed.port, parsed.ip)


def refusal(ip: IPAddress, *, allow_private: bool) -> str | None:
    """Why a webhook may not connect to ``ip`` (e.g. "a private address"), or None when it may."""
    why = AddressPolicy(allow_private=allow_private).reason(ip)
    return None if why is None else f"a {why}"
