"""URL validation and the network address policy, raising the reader's failures (pure: no DNS,
no sockets; the rules themselves live in quarry_common.urls and quarry_common.addresses)."""

from __future__ import annotations

from urllib.parse import urljoin

from quarry_common import addresses
from quarry_common.addresses import IPAddress, IPNetwork, embedded_ipv4
from quarry_common.urls import MAX_URL_LENGTH, HttpURL, URLRefused, parse_http_url

from reader.errors import ReadFailure
from reader.model import Status

__all__ = [
    "MAX_URL_LENGTH",
    "AddressPolicy",
    "IPAddress",
    "IPNetwork",
    "Target",
    "embedded_ipv4",
    "parse_url",
]

# A validated http(s) URL, normalised (ASCII host, explicit port, no fragment); its ``url`` is
# also the cache key. The syntax rules are shared with the orchestrator's webhooks.
Target = HttpURL


def _blocked(reason: str) -> ReadFailure:
    return ReadFailure(Status.BLOCKED, reason)


def parse_url(url: str) -> Target:
    """Validate ``url`` as a fetchable http(s) URL; raise ReadFailure otherwise.

    The syntax is quarry_common.urls' (one check for every request a user can aim): a URL
    aimed where no request may go is BLOCKED, a malformed one INVALID_URL; localhost is
    refused by name even when private networks are open (the address policy decides those).
    """
    try:
        return parse_http_url(url)
    except URLRefused as refused:
        status = Status.BLOCKED if refused.blocked else Status.INVALID_URL
        raise ReadFailure(status, refused.reason) from None


def resolve_reference(base: Target, location: str) -> Target:
    """Resolve a redirect ``location`` against ``base`` and validate the result."""
    return parse_url(urljoin(base.url, location.strip()))


class AddressPolicy(addresses.AddressPolicy):
    """The shared address policy (quarry_common.addresses), raising the reader's failure."""

    def check(self, ip: IPAddress) -> None:
        """Raise ReadFailure(BLOCKED) when ``ip`` is refused."""
        why = self.reason(ip)
        if why is not None:
            raise _blocked(why)
