"""URL normalisation for de-duplication (pure; never raises on odd input)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ranker.model import SearchResult

_DEFAULT_PORTS = {"http": 80, "https": 443}

# Click-tracking parameters that never change what a page shows: Google/Meta/Microsoft/
# Mailchimp/HubSpot/Yandex click ids and the referral tags the big engines append.
_TRACKING_PARAMS = frozenset(
    {
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "fbclid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "yclid",
        "_hsenc",
        "_hsmi",
        "igshid",
        "ref_src",
        "srsltid",
    }
)


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in _TRACKING_PARAMS


def normalize_url(url: str) -> str:
    """Return a key under which the same page's URL variants compare equal.

    Lowercases scheme and host, drops default ports, the fragment, tracking parameters
    (``utm_*``, ``gclid``, ``fbclid`` ...) and a trailing slash of the path; keeps the order
    of the remaining query parameters. An unparseable URL is its own (stripped) key.
    """
    raw = url.strip()
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return raw
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        host = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}" if userinfo else host
    path = parts.path.rstrip("/")
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, v) for k, v in pairs if not _is_tracking(k)])
    return urlunsplit((scheme, netloc, path, query, ""))


def engine_order_key(rank: int, position: int) -> tuple[bool, int, int]:
    """Sort key for the engine order: known ranks first, then input position."""
    return (rank == 0, rank, position)


def merge_duplicates(results: Sequence[SearchResult]) -> list[SearchResult]:
    """Merge results whose URLs normalise alike, returned in engine order.

    The merged result is the member with the best engine rank (title, snippet and URL
    included), with the union of all members' engines in first-seen order.
    """
    groups: dict[str, list[int]] = {}
    for i, result in enumerate(results):
        groups.setdefault(normalize_url(result.url), []).append(i)
    merged: list[tuple[tuple[bool, int, int], SearchResult]] = []
    for members in groups.values():
        best = min(members, key=lambda i: engine_order_key(results[i].engine_rank, i))
        engines = tuple(dict.fromkeys(e for i in members for e in results[i].engines))
        published = results[best].published or next(
            (results[i].published for i in members if results[i].published), ""
        )
        winner = results[best]
        if engines != winner.engines or published != winner.published:
            winner = replace(winner, engines=engines, published=published)
        merged.append((engine_order_key(winner.engine_rank, best), winner))
    merged.sort(key=lambda kv: kv[0])
    return [result for _, result in merged]
