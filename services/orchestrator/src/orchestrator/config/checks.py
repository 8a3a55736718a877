"""Patterns and checks the settings share: URLs, rates, hosts and paths."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import urlsplit

# Empty (not configured) or an http(s) URL; anything else stops the service at start.
HTTP_URL = r"^(https?://\S+)?$"
# Empty, or comma-separated http(s) URLs (several SearXNG instances).
HTTP_URLS = r"^(https?://[^\s,]+(\s*,\s*https?://[^\s,]+)*)?$"
# A comma-separated list of search backends.
BACKENDS = r"^(searxng|brave)(\s*,\s*(searxng|brave))?$"
# A rate for the limits library: "N/second", "N/minute", "N per 2 seconds", ...; empty = none.
RATE = r"^(\d+\s*(/|per)\s*(\d+\s*)?(second|minute|hour|day|month)s?)?$"
# auto, or a comma-separated list of web and local.
SOURCES = r"^(auto|(web|local)(\s*,\s*(web|local))?)$"


def parsed_urls(value: str) -> str:
    """``value`` (empty, or comma-separated http(s) URLs) when every URL parses with a host and
    a valid port; the patterns above let ``http://[`` or ``http://h:99999`` through, which
    failed later, at the first request (a 500 from the settings API; found by the fuzz)."""
    for url in (u.strip() for u in value.split(",") if u.strip()):
        try:
            parts = urlsplit(url)
            _ = parts.port  # raises ValueError for a port out of range or not a number
        except ValueError as err:
            raise ValueError(f"{url!r} is not a valid URL ({err})") from None
        if not parts.hostname:
            raise ValueError(f"{url!r} names no host")
    return value


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it (both normalised)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def absolute_dir(value: str) -> str:
    """``value`` normalised; empty stays empty.

    Raises:
        ValueError: a relative path, which would silently depend on the working directory.
    """
    if value and not Path(value).is_absolute():
        raise ValueError("must be an absolute path")
    return os.path.normpath(value) if value else value
