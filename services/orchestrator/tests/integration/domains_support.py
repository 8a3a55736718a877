"""A fixture web of several domains for the source-policy tests: one page server on 127.0.0.1
answering for every ``*.test`` name (RFC 6761), counting each request by host, and a real reader
whose resolver maps those names to 127.0.0.1 (its SSRF policy, DNS pinning and redirect handling
are the production ones); real ranker and index servers; SearXNG scripted to return results from
every domain whatever the operators say (an engine that ignores them: the filter must hold).
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from index.config import Settings as IndexSettings
from index.server import build_server as build_index
from ranker.config import Settings as RankerSettings
from ranker.server import build_server as build_ranker
from reader.config import Settings as ReaderSettings
from reader.fetch import system_resolver
from reader.policy import IPAddress
from reader.server import build_server as build_reader

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_searxng import searx_result
from services.orchestrator.tests.integration.support import TOPICS, World, page_html

# host -> the topic page it serves (every host serves every topic; these are the results)
RESULTS = {
    "docs.good.test": "tides",
    "evil.test": "moon",
    "ads.evil.test": "spring",
    "other.test": "neap",
}
DENIED = ("evil.test", "ads.evil.test")


async def test_resolver(host: str, port: int) -> list[IPAddress]:
    """``*.test`` names are this machine; anything else as the system resolves it."""
    if host.endswith(".test"):
        return [ipaddress.ip_address("127.0.0.1")]
    return await system_resolver(host, port)


test_resolver.__test__ = False  # type: ignore[attr-defined]  # not a test for pytest


@dataclass
class DomainWeb:
    """The multi-domain world: a World for ``support.stack`` plus per-host request counts."""

    world: World
    port: int
    hits: list[tuple[str, str]] = field(default_factory=list)

    def url(self, host: str, path: str) -> str:
        """``http://host:port/path`` on the page server."""
        return f"http://{host}:{self.port}/{path}"

    def fetched(self, host: str) -> int:
        """Requests the page server got for exactly ``host``."""
        return sum(1 for h, _ in self.hits if h == host)

    def results(self, query: str) -> list[dict[str, Any]]:
        """SearXNG results from every domain; a query naming 'moved' also gets good.test's page
        that redirects to evil.test."""
        found = [
            searx_result(self.url(host, topic), f"All about {topic}", TOPICS[topic][:80])
            for host, topic in RESULTS.items()
        ]
        if "moved" in query:
            found.insert(0, searx_result(self.url("good.test", "moved"), "Moved", "Tides moved."))
        return found


@asynccontextmanager
async def serve_domain_web() -> AsyncIterator[DomainWeb]:
    """The page server, a reader with the ``*.test`` resolver, a ranker and an index."""
    hits: list[tuple[str, str]] = []
    port_box: list[int] = []

    async def serve(request: Request) -> Response:
        host = request.headers.get("host", "").rsplit(":", 1)[0]
        path = request.path.strip("/")
        hits.append((host, path))
        if path == "moved":
            target = f"http://evil.test:{port_box[0]}/tides"
            return Response(302, b"", "text/plain", headers={"Location": target})
        if path not in TOPICS:
            return Response(404, b"not found", "text/plain")
        return Response(200, page_html(path), "text/html; charset=utf-8")

    pages = TinyHTTPServer(serve)
    await pages.start()
    port_box.append(int(pages.url.rsplit(":", 1)[1]))
    reader = build_reader(
        # no page cache: every read reaches the page server, where it is counted
        ReaderSettings(port=0, allow_private_networks=True, workers=1, cache_enabled=False),
        resolver=test_resolver,
    )
    ranker = build_ranker(RankerSettings(port=0))
    index = build_index(IndexSettings(port=0))
    try:
        addr = [f"127.0.0.1:{p}" for p in (await reader.start(), await ranker.start())]
        world = World(pages.url, addr[0], addr[1], f"127.0.0.1:{await index.start()}")
        yield DomainWeb(world, port_box[0], hits)
    finally:
        await reader.stop(0)
        await ranker.stop(0)
        await index.stop(0)
        await pages.stop()


def hosts_of(urls: list[str]) -> set[str]:
    """The hosts of ``urls`` (no port)."""
    from urllib.parse import urlsplit

    return {urlsplit(u).hostname or "" for u in urls}


def policy_drops(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every entry the run's `policy` events list as dropped."""
    return [d for e in events if e["type"] == "policy" for d in e["data"]["dropped"]]
