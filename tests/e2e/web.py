"""A small web of real-looking pages for end-to-end tests, served on 127.0.0.1.

The facts are invented, so an answer can only have come from these pages.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


@dataclass(frozen=True)
class Page:
    """One article: path, title and paragraphs."""

    path: str
    title: str
    paragraphs: tuple[str, ...]

    @property
    def text(self) -> str:
        """The main text, as a search snippet source."""
        return " ".join(self.paragraphs)


PAGES = (
    Page(
        "/lighthouses/zephyrine.html",
        "The Zephyrine Lighthouse",
        (
            "The Zephyrine Lighthouse stands on the basalt headland of Karvik Point. "
            "It was designed by the engineer Mara Olsen and first lit in 1874.",
            "Its lantern burned colza oil until 1911, when an acetylene lamp replaced it. "
            "The tower is 31 metres tall and its light reaches 19 nautical miles.",
            "Keepers lived in two cottages at the foot of the tower until automation in 1969.",
        ),
    ),
    Page(
        "/lighthouses/karvik-history.html",
        "A short history of Karvik Point",
        (
            "Karvik Point was a fishing settlement long before the lighthouse was built. "
            "Shipwrecks on the Karvik reef led the harbour board to commission a light in 1869.",
            "Mara Olsen won the design competition with a tapering stone tower; construction "
            "took four years because stone had to be shipped from the Dunmore quarry.",
        ),
    ),
    Page(
        "/food/saltbread.html",
        "Karvik saltbread recipe",
        (
            "Karvik saltbread is a dense rye loaf baked with seawater instead of salt. "
            "Bakers proof the dough for 14 hours in a cool cellar.",
            "The loaf is baked at 210 degrees Celsius for 55 minutes and brushed with "
            "buttermilk while still hot.",
        ),
    ),
    Page(
        "/science/glowmoss.html",
        "Glowmoss: the luminous moss of the northern fjords",
        (
            "Glowmoss (Bryum lucens) emits a faint green light at night. The glow comes from "
            "a luciferin that the moss produces only when air temperature is below 8 degrees.",
            "Colonies grow on wet north-facing rock and can live for more than 200 years.",
        ),
    ),
    Page(
        "/science/glowmoss-research.html",
        "Research notes on glowmoss luminescence",
        (
            "In 2019 a team at the Tromsvik field station measured glowmoss brightness across "
            "a full winter. Brightness peaked in January at about 0.2 lux.",
            "The team found that the glow attracts springtails, which spread the moss spores.",
        ),
    ),
    Page(
        "/transport/ferry.html",
        "The Karvik-Holm ferry timetable",
        (
            "The ferry between Karvik and Holm island sails four times a day in summer and "
            "twice a day from October to April. The crossing takes 40 minutes.",
            "Bicycles travel free; cars must be booked at least one day in advance.",
        ),
    ),
)

_NAV = "".join(f'<li><a href="{p.path}">{html.escape(p.title)}</a></li>' for p in PAGES)


def render(page: Page) -> bytes:
    """A page with navigation, a cookie banner and a footer around the article."""
    body = "".join(f"<p>{html.escape(par)}</p>" for par in page.paragraphs)
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(page.title)} | Karvik Notes</title>
<meta property="og:site_name" content="Karvik Notes"></head>
<body><header><nav><ul>{_NAV}</ul></nav></header>
<div class="cookie">We use cookies to remember your settings. <button>Accept</button></div>
<main><article><h1>{html.escape(page.title)}</h1>{body}</article></main>
<aside><h2>Related</h2><ul>{_NAV}</ul></aside>
<footer><p>Copyright 2026 Karvik Notes. All rights reserved.</p></footer></body></html>"""
    return doc.encode("utf-8")


# A slow page drips one byte per tick, so a full page takes minutes: long enough that only a
# cancelled fetch (the client closing its connection) ends the request within seconds.
DRIP_TICK_S = 0.1


class _WebServer(ThreadingHTTPServer):
    daemon_threads = True
    state: FixtureWeb


class _Handler(BaseHTTPRequestHandler):
    pages: ClassVar[dict[str, bytes]] = {p.path: render(p) for p in PAGES}
    server: _WebServer

    def log_message(self, *_: Any) -> None:
        return

    def do_GET(self) -> None:
        state = self.server.state
        path = self.path.split("?", 1)[0]
        with state.lock:
            state.hits[path] = state.hits.get(path, 0) + 1
            state.inflight += 1
        try:
            self._serve(state, path)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away: exactly what the cancellation tests look for
        finally:
            with state.lock:
                state.inflight -= 1

    def _serve(self, state: FixtureWeb, path: str) -> None:
        body = self.pages.get(path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if path not in state.slow:
            self.wfile.write(body)
            return
        for i in range(len(body)):
            if state.stopping.wait(DRIP_TICK_S):
                return
            self.wfile.write(body[i : i + 1])
            self.wfile.flush()


@dataclass
class FixtureWeb:
    """The running web: its base URL, how often each path was fetched, requests in flight.

    Paths in ``slow`` are served one byte per tick (set and clear it from the test).
    """

    base_url: str
    hits: dict[str, int] = field(default_factory=dict)
    inflight: int = 0
    slow: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def url(self, page: Page) -> str:
        """The absolute URL of ``page``."""
        return self.base_url + page.path

    def fetched(self, url: str) -> int:
        """How many times ``url`` (one of ours) was requested."""
        with self.lock:
            return self.hits.get(url.removeprefix(self.base_url), 0)

    def open_requests(self) -> int:
        """Requests being served right now."""
        with self.lock:
            return self.inflight


@contextmanager
def serve_web() -> Iterator[FixtureWeb]:
    """Serve :data:`PAGES` on 127.0.0.1 (a free port) for the duration of the block."""
    server = _WebServer(("127.0.0.1", 0), _Handler)
    state = FixtureWeb(f"http://127.0.0.1:{server.server_address[1]}")
    server.state = state
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()
