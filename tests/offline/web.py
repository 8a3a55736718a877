"""A local web on 127.0.0.1: any route table of paths to page bytes, served over real HTTP.

Counts fetches per path and requests in flight; paths in ``slow`` drip one byte per tick, so
only a cancelled fetch (the client closing its connection) ends such a request within seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

# The body of a path, or None for 404.
Route = Callable[[str], bytes | None]

DRIP_TICK_S = 0.1


class HasPath(Protocol):
    """Anything served at a path (e.g. a fixture page)."""

    @property
    def path(self) -> str: ...


@dataclass
class LocalWeb:
    """The running web: its base URL, how often each path was fetched, requests in flight.

    Paths in ``slow`` are served one byte per tick (set and clear it from the test).
    """

    base_url: str
    hits: dict[str, int] = field(default_factory=dict)
    inflight: int = 0
    slow: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def url(self, page: str | HasPath) -> str:
        """The absolute URL of a path or a page."""
        return self.base_url + (page if isinstance(page, str) else page.path)

    def path_of(self, url: str) -> str:
        """The path of one of our URLs."""
        return url.removeprefix(self.base_url)

    def fetched(self, url: str) -> int:
        """How many times ``url`` (one of ours) was requested."""
        with self.lock:
            return self.hits.get(self.path_of(url), 0)

    def open_requests(self) -> int:
        """Requests being served right now."""
        with self.lock:
            return self.inflight


class _WebServer(ThreadingHTTPServer):
    daemon_threads = True
    state: LocalWeb
    route: Route


class _Handler(BaseHTTPRequestHandler):
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

    def _serve(self, state: LocalWeb, path: str) -> None:
        body = self.server.route(path)
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


def directory_route(mounts: Mapping[str, Path]) -> Route:
    """Serve ``/<name>/<file>.html`` from ``mounts[name]`` (top-level HTML files only)."""

    def route(path: str) -> bytes | None:
        parts = path.strip("/").split("/")
        if len(parts) != 2 or parts[0] not in mounts or not parts[1].endswith(".html"):
            return None
        name = parts[1]
        if name.startswith(".") or "\\" in name:
            return None
        file = mounts[parts[0]] / name
        return file.read_bytes() if file.is_file() else None

    return route


@contextmanager
def serve(route: Route) -> Iterator[LocalWeb]:
    """Serve ``route`` on 127.0.0.1 (a free port) for the duration of the block."""
    server = _WebServer(("127.0.0.1", 0), _Handler)
    state = LocalWeb(f"http://127.0.0.1:{server.server_address[1]}")
    server.state = state
    server.route = route
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()
