"""After a plain read: should the page be rendered, and with what result? (the tier policy)

The render tier runs when the setting says ``always``, or (``on-demand``) when the plain
extraction came back empty or the page looks like a JavaScript shell (:mod:`reader.shell`),
or when the domain's memory says its plain reads always come back empty. It is skipped when
the domain's renders keep failing, when every render slot is taken (renders queue behind
renders only, never in front of plain reads), or when too little time is left.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable

from reader.config import Settings
from reader.errors import ReadFailure
from reader.extract import Job
from reader.fetch import Fetched
from reader.memory import DomainMemory
from reader.model import Extracted, Kind, ReadResult, RenderInfo, Status
from reader.render import MIN_RENDER_S, Renderer, RenderLimits
from reader.shell import THIN_TEXT_CHARS, signals

# Time kept back from a render for extracting its DOM.
RENDER_EXTRACT_RESERVE_S = 1.0

Extract = Callable[[Job, float | None], Awaitable[Extracted]]


def _chars(result: ReadResult) -> int:
    return len(result.extracted.markdown.strip()) if result.extracted is not None else 0


class RenderTier:
    """Decides on and runs renders for :class:`reader.core.Reader`."""

    def __init__(self, settings: Settings, renderer: Renderer, memory: DomainMemory | None) -> None:
        self._settings = settings
        self._renderer = renderer
        self._memory = memory

    def _reason(self, result: ReadResult, fetched: Fetched, host: str) -> str:
        """Why to render ("" when not needed)."""
        if self._settings.render == "always":
            return "always"
        if self._memory is not None and self._memory.advice(host) == "render_first":
            return "domain: plain reads empty"
        seen = signals(fetched.body, _chars(result))
        if seen.shell:
            return seen.reason
        return "empty" if result.status is Status.EMPTY else ""

    async def after_plain(
        self, result: ReadResult, fetched: Fetched | None, host: str, end: float, extract: Extract
    ) -> ReadResult:
        """``result``, or a better one from rendering the page; ``end``: loop time to finish by."""
        if fetched is None or fetched.kind is not Kind.HTML:
            return result
        if result.status not in (Status.OK, Status.EMPTY):
            return result
        reason = self._reason(result, fetched, host)
        if not reason:
            return dataclasses.replace(result, render=RenderInfo("NOT_NEEDED"))
        if self._memory is not None and self._memory.advice(host) == "skip_render":
            return dataclasses.replace(result, render=RenderInfo("SKIPPED", reason))
        if self._renderer.busy:
            return dataclasses.replace(result, render=RenderInfo("BUSY", reason))
        loop = asyncio.get_running_loop()
        budget = min(self._settings.render_timeout_s, end - loop.time() - RENDER_EXTRACT_RESERVE_S)
        if budget < MIN_RENDER_S:
            return dataclasses.replace(result, render=RenderInfo("SKIPPED", reason + ",no time"))
        return await self._render(result, fetched, host, reason, budget, end, extract)

    async def _render(
        self,
        result: ReadResult,
        fetched: Fetched,
        host: str,
        reason: str,
        budget: float,
        end: float,
        extract: Extract,
    ) -> ReadResult:
        s = self._settings
        limits = RenderLimits(
            budget,
            s.render_max_requests,
            s.render_max_bytes,
            s.render_settle_s,
            s.max_redirects,
            s.user_agent,
        )
        main = (fetched.body, fetched.content_type or "text/html")
        render_end = end - RENDER_EXTRACT_RESERVE_S
        rendered = await self._renderer.render(fetched.final_url, limits, main, render_end)
        info = RenderInfo(
            rendered.status,
            reason,
            rendered.ms,
            rendered.requests,
            rendered.refused,
            rendered.bytes,
        )
        better: Extracted | None = None
        if rendered.html:
            job = Job(rendered.html.encode("utf-8"), Kind.HTML, rendered.final_url, "utf-8")
            left = end - asyncio.get_running_loop().time()
            try:
                better = await extract(job, max(left, 0.1))
            except ReadFailure:
                better = None
        gained = better is not None and len(better.markdown.strip()) > max(
            _chars(result), THIN_TEXT_CHARS // 5
        )
        if self._memory is not None:
            worked = rendered.status == "RENDERED"
            status = "OK" if gained else ("EMPTY" if worked else rendered.status)
            chars = len(better.markdown) if better is not None else 0
            self._memory.record(host, "render", status, rendered.ms, chars)
        if not gained or better is None:
            return dataclasses.replace(result, render=info)
        return dataclasses.replace(
            result, status=Status.OK, error="", extracted=better, tier="render", render=info
        )
