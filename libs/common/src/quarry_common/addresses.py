"""Which network addresses a server-side request may reach: one policy for every outgoing
request a user can aim (the reader's page fetches, the orchestrator's webhooks).

Pure: no DNS, no sockets. Callers resolve a host themselves, ask ``reason`` for every address
it resolves to, and connect to the checked address (so a DNS change in between cannot redirect
the request).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_COMPAT = ipaddress.IPv6Network("::/96")
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, 6to4, NAT64, IPv4-compatible)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or (ip in _IPV4_COMPAT and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


class AddressPolicy:
    """Decides which resolved addresses a request may connect to.

    Refused by default: loopback, private, link-local (cloud metadata at 169.254.169.254),
    CGNAT, multicast, reserved, unspecified, and IPv6 forms that embed or tunnel to those.
    ``allow_private`` opens private, loopback, CGNAT and ULA ranges; link-local,
    multicast, reserved and unspecified stay closed unless listed in ``allowed``.
    """

    def __init__(self, *, allow_private: bool = False, allowed: Sequence[IPNetwork] = ()) -> None:
        self._allow_private = allow_private
        self._allowed = tuple(allowed)

    def reason(self, ip: IPAddress) -> str | None:
        """Why ``ip`` is refused, or None when it may be contacted."""
        if any(ip.version == net.version and ip in net for net in self._allowed):
            return None
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.scope_id:
                return "scoped address"
            inner = embedded_ipv4(ip)
            if inner is not None:
                return self.reason(inner)
            if ip.teredo is not None or ip in _NAT64_LOCAL:
                return "tunnel address"
        if ip.is_loopback:  # before is_reserved: ::1 sits in the reserved ::/8
            return None if self._allow_private else "private address"
        if ip.is_unspecified or ip.is_multicast or ip.is_link_local or ip.is_reserved:
            return "special-purpose address"
        if ip.version == 4 and ip in _THIS_NETWORK:
            return "special-purpose address"
        if ip.is_global:
            return None
        # Everything left is private, loopback, CGNAT, ULA or documentation space.
        return None if self._allow_private else "private address"
