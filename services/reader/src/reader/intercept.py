"""The render tier's gate: every request a rendering page makes is fetched by the reader's
fetcher (address policy, DNS pinning, redirect checks, byte caps) and fulfilled, or refused and
logged. Split from reader/render.py, which owns the browser and the page's lifetime.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Route

from reader.errors import ReadFailure
from reader.fetch import Fetcher, Limits

if TYPE_CHECKING:
    from reader.render import Rendered, RenderLimits

logger = logging.getLogger("reader.render")

# Resource types a text extraction never needs; aborted without a fetch.
_SKIPPED = frozenset(
    {"image", "media", "font", "stylesheet", "manifest", "texttrack", "eventsource", "ping"}
)
_METHODS = frozenset({"GET", "HEAD"})
# Schemes the page may use without a request leaving the browser (or routed to the fetcher).
_ROUTED_SCHEMES = frozenset({"http", "https", "data", "blob", "about"})
# A page is settled when no request has been in flight for this long after its DOM is ready.
QUIET_S = 0.25


class Interceptor:
    """Fetches every request of one page through the reader's fetcher, or refuses it."""

    def __init__(
        self,
        fetcher: Fetcher,
        limits: RenderLimits,
        outcome: Rendered,
        url: str,
        main: tuple[bytes, str] | None,
        end: float,
    ) -> None:
        self._fetcher = fetcher
        self._limits = limits
        self._outcome = outcome
        self._url = url
        self._main = main
        self._end = end
        self._noted: set[tuple[str, str]] = set()
        # Requests being fetched, and when the last one started or ended (loop time).
        self._in_flight = 0
        self._last_activity = 0.0

    async def settled(self, most_s: float) -> None:
        """Wait until no request has been in flight for ``QUIET_S`` (at most ``most_s``):
        the scripts' XHR/fetch calls have landed. Playwright's "networkidle" always waits
        500 ms; the reader sees every request itself, so it can tell sooner."""
        loop = asyncio.get_running_loop()
        until = loop.time() + most_s
        # Quiet counts from now at the earliest: a script's fetch() started while the document
        # was parsed reaches the interceptor a moment after DOMContentLoaded, and a snapshot
        # taken before then is the empty shell (single-page apps that load their text as JSON).
        self._last_activity = max(self._last_activity, loop.time())
        while loop.time() < until:
            if self._in_flight == 0 and loop.time() - self._last_activity >= QUIET_S:
                return
            await asyncio.sleep(QUIET_S / 4)

    def _refuse(self, url: str, reason: str, resource: str) -> None:
        self._outcome.refused += 1
        host = url.split("/")[2] if url.count("/") >= 2 else url[:16]
        if len(self._outcome.refusals) < 50:
            self._outcome.refusals.append((host, reason))
        logger.info(
            "render sub-request refused",
            extra={"host": host, "reason": reason, "resource": resource},
        )

    def note_scheme(self, request: Any) -> None:
        """Log a request for a scheme interception never sees (Chromium refuses those)."""
        scheme = request.url.split(":", 1)[0].lower()
        if scheme not in _ROUTED_SCHEMES and (request.url, scheme) not in self._noted:
            self._noted.add((request.url, scheme))
            self._refuse(f"{scheme}:", f"scheme {scheme}", request.resource_type)

    def note_console(self, message: Any) -> None:
        """Chromium reports a refused local resource (file:) only on the console."""
        if message.type == "error" and "Not allowed to load local resource" in message.text:
            scheme = message.text.rsplit(":", 2)[-2].strip().split()[-1].lower()
            self._refuse(f"{scheme}:", f"scheme {scheme}", "local resource")

    async def route(self, route: Route) -> None:
        with contextlib.suppress(PlaywrightError):  # the page may be gone already
            await self._route(route)

    async def _route(self, route: Route) -> None:
        request = route.request
        url, kind = request.url, request.resource_type
        if kind in _SKIPPED:
            await route.abort("blockedbyclient")
            return
        if request.method not in _METHODS:
            self._refuse(url, f"method {request.method}", kind)
            await route.abort("blockedbyclient")
            return
        if self._main is not None and url == self._url and request.is_navigation_request():
            body, content_type = self._main
            self._main = None  # only the first navigation: a reload fetches again
            await route.fulfill(status=200, body=body, headers={"content-type": content_type})
            return
        if self._outcome.requests >= self._limits.max_requests:
            self._refuse(url, "request cap", kind)
            await route.abort("blockedbyclient")
            return
        self._outcome.requests += 1
        await self._fetch(route, url, kind)

    async def _fetch(self, route: Route, url: str, kind: str) -> None:
        room = self._limits.max_bytes - self._outcome.bytes
        if room <= 0:
            self._refuse(url, "byte cap", kind)
            await route.abort("blockedbyclient")
            return
        limits = Limits(
            room, self._limits.max_redirects, self._limits.user_agent, self._end, any_type=True
        )
        loop = asyncio.get_running_loop()
        self._in_flight += 1
        self._last_activity = loop.time()
        try:
            async with asyncio.timeout_at(self._end):
                fetched = await self._fetcher.fetch(url, limits)
            self._outcome.bytes += len(fetched.body)
            headers = {"content-type": fetched.content_type} if fetched.content_type else {}
            await route.fulfill(status=fetched.http_status, body=fetched.body, headers=headers)
        except ReadFailure as failure:
            self._refuse(url, f"{failure.status.value}: {failure.reason}", kind)
            await route.abort("blockedbyclient" if failure.status.value == "BLOCKED" else "failed")
        except TimeoutError:
            self._refuse(url, "timed out", kind)
            await route.abort("timedout")
        finally:
            # In flight until the page has the reply (fulfilled), so the quiet period starts
            # when its script can act on it.
            self._in_flight -= 1
            self._last_activity = loop.time()
