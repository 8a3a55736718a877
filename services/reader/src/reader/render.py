"""The rendering tier: a page that is a JavaScript shell, rendered in headless Chromium.

Safety is the fetcher's: every request the page makes (main document, scripts, XHR/fetch,
frames) is intercepted and fetched by :class:`reader.fetch.Fetcher` under the address policy,
with its DNS pinning, redirect checks and byte caps, then fulfilled; anything else is aborted
and logged. Only GET/HEAD; images, media, fonts, styles and beacons are never fetched (text
does not need them); WebSockets are closed; no downloads, permissions or service workers.
Chromium itself resolves no name and sends anything not intercepted to a dead proxy, so a
request that slipped past interception still reaches nothing.

Bounds per page: time, requests, bytes, V8 heap, and the browser's resident memory (checked
while the page renders). One browser per reader process, relaunched after ``recycle_pages``
pages, above ``max_rss_mb``, or when a page would not close.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from reader.fetch import Fetcher
from reader.intercept import Interceptor
from reader.procs import find_marked, lower_priority, pss_mb, tree

logger = logging.getLogger(__name__)

# Renderers run at this niceness: plain reads' extraction workers get the CPU first.
RENDER_NICENESS = 10
# Renders that may wait per render slot (each waits no longer than its own read's deadline).
QUEUE_PER_SLOT = 4
# A render with less time than this left is not started.
MIN_RENDER_S = 1.0
# How often the browser's memory is checked while a page renders.
WATCH_EVERY_S = 0.25
# Time allowed to close a page's context; a browser that cannot is relaunched.
CLOSE_TIMEOUT_S = 3.0


def launch_args(heap_mb: int) -> list[str]:
    """Chromium flags: no network of its own, small, quiet."""
    return [
        # Defence in depth behind interception: no DNS, and a proxy that does not exist, with
        # the implicit loopback bypass removed.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=http://255.255.255.255:9",
        "--proxy-bypass-list=<-loopback>",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--dns-prefetch-disable",
        "--no-pings",
        f"--js-flags=--max-old-space-size={heap_mb}",
        "--renderer-process-limit=2",
        "--disable-features=site-per-process,IsolateOrigins,InterestFeedContentSuggestions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-sync",
        "--disable-extensions",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--mute-audio",
        "--no-first-run",
    ]


@dataclass(frozen=True)
class RenderLimits:
    """Per-page caps."""

    timeout_s: float
    max_requests: int
    max_bytes: int
    settle_s: float
    max_redirects: int
    user_agent: str


@dataclass
class Rendered:
    """One render's outcome: the DOM's HTML when it worked, and what it cost."""

    status: str = "FAILED"  # RENDERED, TIMEOUT, CRASHED, MEMORY, FAILED
    html: str = ""
    final_url: str = ""
    error: str = ""
    ms: int = 0
    requests: int = 0
    refused: int = 0
    bytes: int = 0
    refusals: list[tuple[str, str]] = field(default_factory=list)


class MemoryExceeded(Exception):
    """The browser grew past its memory cap while a page rendered."""


class Renderer:
    """One headless Chromium, rendering at most ``concurrency`` pages at a time."""

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        executable: str,
        concurrency: int = 1,
        recycle_pages: int = 50,
        max_rss_mb: int = 1024,
        heap_mb: int = 256,
    ) -> None:
        self._fetcher = fetcher
        self._executable = executable
        self._slots = asyncio.Semaphore(concurrency)
        self._waiting = 0
        self._concurrency = concurrency
        self._recycle_pages = recycle_pages
        self._max_rss_mb = max_rss_mb
        self._heap_mb = heap_mb
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._pages = 0
        self._launch_lock = asyncio.Lock()
        # An argument Chromium ignores, naming this renderer's browser among the processes.
        self._marker = f"--quarry-renderer={os.getpid()}-{id(self):x}"
        self._browser_pid: int | None = None

    @property
    def busy(self) -> bool:
        """Every slot taken and the queue full: a new render is refused rather than queued."""
        return self._slots.locked() and self._waiting >= QUEUE_PER_SLOT * self._concurrency

    async def render(
        self, url: str, limits: RenderLimits, main: tuple[bytes, str] | None, end: float
    ) -> Rendered:
        """Render ``url`` (whose body and content type may be known already: ``main``), done
        by loop time ``end`` whatever the wait for a slot and the browser's launch took."""
        outcome = Rendered(final_url=url)
        start = time.monotonic()
        try:
            self._waiting += 1
            try:
                await self._slots.acquire()
            finally:
                self._waiting -= 1
            try:
                await self._render(url, limits, main, outcome, end)
            finally:
                self._slots.release()
        finally:
            outcome.ms = int((time.monotonic() - start) * 1000)
        return outcome

    async def _render(
        self,
        url: str,
        limits: RenderLimits,
        main: tuple[bytes, str] | None,
        outcome: Rendered,
        end: float,
    ) -> None:
        browser = await self._ensure_browser()
        left = end - asyncio.get_running_loop().time()
        if left < MIN_RENDER_S:
            outcome.status, outcome.error = "SKIPPED", "no time left to render"
            return
        limits = dataclasses.replace(limits, timeout_s=min(limits.timeout_s, left))
        context = await browser.new_context(
            service_workers="block",
            accept_downloads=False,
            user_agent=limits.user_agent,
            permissions=[],
        )
        end = asyncio.get_running_loop().time() + limits.timeout_s
        handler = Interceptor(self._fetcher, limits, outcome, url, main, end)
        try:
            await context.route("**/*", handler.route)
            await context.route_web_socket("**/*", lambda ws: ws.close())
            page = await context.new_page()
            page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.dismiss()))
            # file:, chrome: and the like never reach interception; Chromium refuses them.
            page.on("request", handler.note_scheme)
            page.on("requestfailed", handler.note_scheme)
            page.on("console", handler.note_console)
            async with asyncio.TaskGroup() as tg:
                watch = tg.create_task(self._watch())
                await self._load(page, url, limits, outcome, handler)
                watch.cancel()
        except* MemoryExceeded:
            outcome.status, outcome.error = "MEMORY", "browser memory cap"
        finally:
            await self._close(context)

    async def _load(
        self,
        page: Any,
        url: str,
        limits: RenderLimits,
        outcome: Rendered,
        handler: Interceptor,
    ) -> None:
        try:
            async with asyncio.timeout(limits.timeout_s):
                await page.goto(url, wait_until="domcontentloaded")
                await handler.settled(limits.settle_s)
                outcome.html = await page.content()
                outcome.final_url = page.url
                outcome.status = "RENDERED"
        except TimeoutError:
            outcome.status, outcome.error = "TIMEOUT", "render timed out"
            # A page that never stops loading may still have its text: take what is there.
            with contextlib.suppress(PlaywrightError, TimeoutError):
                async with asyncio.timeout(1.0):
                    outcome.html = await page.content()
        except PlaywrightError as err:
            crashed = "crash" in str(err).lower()
            outcome.status = "CRASHED" if crashed else "FAILED"
            outcome.error = "page crashed" if crashed else "render failed"

    async def _watch(self) -> None:
        """Raise when the browser passes its memory cap; keep its processes at low priority."""
        while True:
            pids = self._pids()
            lower_priority(pids, RENDER_NICENESS)
            if self._max_rss_mb and pss_mb(pids) > self._max_rss_mb:
                raise MemoryExceeded
            await asyncio.sleep(WATCH_EVERY_S)

    def _pids(self) -> list[int]:
        """The browser's processes (found by the marker on its command line)."""
        if self._browser_pid is None:
            self._browser_pid = find_marked(self._marker.encode())
        return tree(self._browser_pid) if self._browser_pid is not None else []

    def memory_mb(self) -> float:
        """The browser's memory now (proportional set size of its processes), in MiB."""
        return pss_mb(self._pids()) if self._browser is not None else 0.0

    async def _ensure_browser(self) -> Browser:
        async with self._launch_lock:
            if self._browser is not None and self._pages >= self._recycle_pages:
                await self._drop_browser("recycled after pages")
            if self._browser is None or not self._browser.is_connected():
                if self._playwright is None:
                    self._playwright = await async_playwright().start()
                self._browser = await self._playwright.chromium.launch(
                    executable_path=self._executable,
                    headless=True,
                    args=[*launch_args(self._heap_mb), self._marker],
                )
                self._pages, self._browser_pid = 0, None
            self._pages += 1
            return self._browser

    async def _close(self, context: Any) -> None:
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await context.close()
        except (TimeoutError, PlaywrightError):
            await self._drop_browser("a page would not close")
            return
        if self._max_rss_mb and pss_mb(self._pids()) > self._max_rss_mb:
            await self._drop_browser("memory after a page")

    async def _drop_browser(self, why: str) -> None:
        browser, self._browser = self._browser, None
        if browser is None:
            return
        logger.info("render browser relaunched", extra={"reason": why})
        with contextlib.suppress(PlaywrightError, TimeoutError):
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await browser.close()

    async def close(self) -> None:
        """Close the browser and the Playwright driver."""
        await self._drop_browser("reader stopping")
        if self._playwright is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await self._playwright.stop()
            self._playwright = None
