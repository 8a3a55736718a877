"""Host-side stand-ins for the containers: SearXNG, the LLM and a few web pages.

The scripted fakes (services/orchestrator/tests/fakes) listen on 127.0.0.1, which a container
cannot reach; a TCP relay on the podman network's gateway address forwards to them. Everything
runs on one asyncio loop in a background thread, so the tests themselves stay synchronous.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_llm import FakeLLM
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result

T = TypeVar("T")

PAGES = {
    "/tides": (
        "How tides work",
        "Tides are the regular rise and fall of the sea surface caused by the gravitational pull "
        "of the Moon and the Sun acting on the rotating Earth. Most coasts see two high tides and "
        "two low tides every lunar day of about 24 hours and 50 minutes.",
    ),
    "/spring-tides": (
        "Spring and neap tides",
        "Spring tides happen when the Sun, Moon and Earth line up at new and full moon, so their "
        "pulls add together and the tidal range is largest. Neap tides happen at the quarter "
        "moons, when the pulls partly cancel and the range is smallest.",
    ),
}


def _page_html(title: str, text: str) -> bytes:
    paragraphs = "".join(f"<p>{sentence.strip()}.</p>" for sentence in text.split(". "))
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><article>"
        f"<h1>{title}</h1>{paragraphs}</article></body></html>"
    ).encode()


class Relay:
    """Forward TCP connections from ``host``:<free port> to 127.0.0.1:``target_port``."""

    def __init__(self, host: str, target_port: int, port: int = 0) -> None:
        self.host = host
        self.target_port = target_port
        self.port = port
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        # Closing every socket ends the pipes; cancelling their tasks instead makes asyncio log
        # the cancellation from the stream protocol's callback.
        for writer in list(self._writers):
            writer.close()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True
            )
        finally:
            self._writers -= {writer, up_writer}

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        finally:
            with contextlib.suppress(Exception):
                dst.close()


class StandIns:
    """FakeSearxng, FakeLLM and a page server, reachable from containers at ``gateway``."""

    def __init__(
        self,
        gateway: str,
        ports: dict[str, int] | None = None,
        extra: dict[str, int] | None = None,
    ) -> None:
        """``ports`` fixes relay ports by name; ``extra`` relays more host ports (name: port)."""
        self.gateway = gateway
        self.ports = ports or {}
        self.extra = extra or {}
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.page_requests: list[str] = []
        self.llm: FakeLLM
        self.searxng: FakeSearxng
        self._pages: TinyHTTPServer
        self._relays: dict[str, Relay] = {}

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run ``coro`` on the stand-ins' loop and wait for its result."""
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    def url(self, name: str) -> str:
        """Base URL of stand-in ``name`` (searxng, llm, pages) as a container sees it."""
        return f"http://{self.gateway}:{self._relays[name].port}"

    def start(self) -> None:
        self._thread.start()
        self.run(self._start())

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.run(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    async def _serve_page(self, request: Request) -> Response:
        self.page_requests.append(request.path)
        page = PAGES.get(request.path)
        if page is None:
            return Response(404, b"not found", "text/plain")
        return Response(200, _page_html(*page), "text/html; charset=utf-8")

    def _results(self, query: str) -> list[dict[str, Any]]:
        base = self.url("pages")
        return [
            searx_result(f"{base}{path}", title, text[:120], engine="duckduckgo")
            for path, (title, text) in PAGES.items()
        ]

    async def _start(self) -> None:
        self.llm = FakeLLM(model="fake-model")
        self.searxng = FakeSearxng(results=self._results)
        self._pages = TinyHTTPServer(self._serve_page)
        await self.llm.__aenter__()
        await self.searxng.__aenter__()
        await self._pages.start()
        targets = {"llm": self.llm.url, "searxng": self.searxng.url, "pages": self._pages.url}
        targets |= {name: f"http://127.0.0.1:{port}" for name, port in self.extra.items()}
        for name, url in targets.items():
            relay = Relay(self.gateway, int(url.rsplit(":", 1)[1]), self.ports.get(name, 0))
            await relay.start()
            self._relays[name] = relay

    async def _stop(self) -> None:
        for relay in self._relays.values():
            await relay.stop()
        await self._pages.stop()
        await self.searxng.__aexit__(None, None, None)
        await self.llm.__aexit__(None, None, None)
