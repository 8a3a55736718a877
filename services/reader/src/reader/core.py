"""The reader's use cases: read a URL, extract a document (transport-free)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any, Protocol

from reader.cache import ReadCache
from reader.config import Settings
from reader.content import header_charset, kind_of, looks_binary, sniff
from reader.errors import (
    ExtractionFailed,
    ExtractionTimeout,
    Overloaded,
    ReadFailure,
    WorkerCrashed,
)
from reader.extract import Job
from reader.fetch import Fetched, Fetcher, Limits
from reader.memory import DomainMemory
from reader.model import Extracted, Kind, ReadResult, Status
from reader.policy import MAX_URL_LENGTH, Target, parse_url
from reader.tiers import RenderTier

logger = logging.getLogger(__name__)

# Time kept back from the caller's gRPC deadline so the answer still arrives before it.
DEADLINE_MARGIN_S = 0.05
# Time kept for extraction when a body is still arriving near the deadline (typical pages
# extract in 10-100 ms; big ones in about a second).
EXTRACT_RESERVE_S = 1.5
# Time past READER_PDF_TIMEOUT_S before a PDF's worker is killed: the page in progress may
# finish and the text extracted so far come back.
PDF_KILL_MARGIN_S = 1.0


class Runner(Protocol):
    """What the reader needs from the extraction pool."""

    @property
    def saturated(self) -> bool:
        """True when a new job would be refused right now."""

    async def run(
        self, job: Any, timeout_s: float | None = None, *, key: str = "", heavy: bool = False
    ) -> Any:
        """Run ``job`` in a worker (``key``: who asked, for fairness; ``heavy``: a PDF)."""


class Reader:
    """Reads URLs and extracts documents under the configured limits."""

    def __init__(
        self,
        settings: Settings,
        pool: Runner,
        fetcher: Fetcher,
        *,
        render: RenderTier | None = None,
        memory: DomainMemory | None = None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._fetcher = fetcher
        self._render = render
        self._memory = memory
        self._cache = (
            ReadCache(size=settings.cache_size, ttl_s=settings.cache_ttl_s)
            if settings.cache_enabled and settings.cache_ttl_s > 0
            else None
        )

    def _budget(
        self, timeout_s: float | None, deadline_s: float | None, *, plain: bool = True
    ) -> float:
        """Seconds for the plain tier (``plain``), or for the whole read (plain + render)."""
        budget = self._settings.timeout_s
        if not plain:
            budget += self._settings.render_timeout_s if self._render is not None else 0.0
        if timeout_s is not None:
            budget = min(budget, timeout_s)
        if deadline_s is not None:
            budget = min(budget, deadline_s - DEADLINE_MARGIN_S)
        return max(budget, 0.0)

    async def read(
        self,
        url: str,
        *,
        timeout_s: float | None = None,
        max_bytes: int | None = None,
        deadline_s: float | None = None,
        key: str = "",
    ) -> ReadResult:
        """Fetch and extract ``url``; every per-URL failure comes back as a status.

        ``key`` names the question asking: the extraction workers are shared fairly by key.

        Raises:
            Overloaded: the extraction queue is full.
        """
        try:
            target = parse_url(url)
        except ReadFailure as failure:
            return ReadResult(failure.status, url, error=failure.reason)
        cap = min(max_bytes or self._settings.max_bytes, self._settings.max_bytes)
        if self._cache is not None and (hit := self._cache.get(target.url, cap)) is not None:
            return dataclasses.replace(hit, url=url, cached=True)
        if self._pool.saturated:
            raise Overloaded  # refuse before fetching: the page could not be extracted anyway
        if self._memory is not None and (wait := self._memory.backoff_left(target.host)) > 0:
            error = f"domain keeps timing out; tried again in {wait:.0f} s"
            return ReadResult(Status.TIMEOUT, url, error=error, tier="fetch")
        loop = asyncio.get_running_loop()
        start = loop.time()
        # The whole read (plain tier, then maybe a render) ends by the caller's limits.
        total = self._budget(timeout_s, deadline_s, plain=False)
        plain = self._budget(timeout_s, deadline_s)
        # Where plain reads always come back empty and renders work, skip the plain extraction.
        straight = self._render is not None and self._advice(target.host) == "render_first"
        result, fetched = await self._plain(url, target, cap, plain, key, extract=not straight)
        plain_result = result
        if self._render is not None:
            extract = lambda job, left: self._extract(job, left, key)  # noqa: E731
            result = await self._render.after_plain(
                result, fetched, target.host, start + total, extract
            )
        self._remember(target.host, plain_result, result, fetched)
        if self._cache is not None and result.status is Status.OK:
            self._cache.put(target.url, cap, result)
        return result

    def _advice(self, host: str) -> str:
        return self._memory.advice(host) if self._memory is not None else ""

    def _remember(
        self, host: str, plain: ReadResult, final: ReadResult, fetched: Fetched | None
    ) -> None:
        """Note how the plain tier fared (the render tier notes its own outcome)."""
        if self._memory is None:
            return
        tier = "pdf" if fetched is not None and fetched.kind is Kind.PDF else "fetch"
        chars = len(plain.extracted.markdown) if plain.extracted is not None else 0
        # A plain read whose text a render replaced gave nothing the render did not.
        status = "EMPTY" if final.tier == "render" else plain.status.value
        self._memory.record(host, tier, status, plain.fetch_ms + plain.extract_ms, chars)

    async def _plain(
        self, url: str, target: Target, cap: int, budget: float, key: str, *, extract: bool
    ) -> tuple[ReadResult, Fetched | None]:
        """Fetch and extract (the plain tier; ``extract`` False: fetch only, for a render):
        the result, and the fetched page if any."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        end = start + budget
        # Stop reading a slow body early enough to extract what arrived.
        read_until = end - min(EXTRACT_RESERVE_S, budget / 4)
        limits = Limits(cap, self._settings.max_redirects, self._settings.user_agent, read_until)
        fetched: Fetched | None = None
        fetch_ms = 0
        try:
            async with asyncio.timeout(budget):
                fetched = await self._fetcher.fetch(target.url, limits)
                fetch_ms = int((loop.time() - start) * 1000)
                if not extract and fetched.kind is Kind.HTML:
                    skipped = ReadResult(Status.EMPTY, url, error="render first", tier="fetch")
                    return dataclasses.replace(
                        skipped,
                        final_url=fetched.final_url,
                        content_type=fetched.content_type,
                        http_status=fetched.http_status,
                        fetched_bytes=len(fetched.body),
                        fetch_ms=fetch_ms,
                    ), fetched
                job = self._job(fetched.body, fetched.kind, fetched.final_url, fetched.charset)
                extracted = await self._extract(job, end - loop.time(), key)
        except TimeoutError:
            return _failed(url, ReadFailure(Status.TIMEOUT, "timed out"), fetched), fetched
        except ReadFailure as failure:
            return _failed(url, failure, fetched), fetched
        except Overloaded:
            raise
        except Exception:  # one hostile page must never fail the call (logged with its trace)
            logger.exception("read failed unexpectedly", extra={"host": target.host})
            unexpected = ReadFailure(Status.NETWORK_ERROR, "read failed")
            return _failed(url, unexpected, fetched), fetched
        result = _result(
            url,
            extracted,
            final_url=fetched.final_url,
            content_type=fetched.content_type,
            http_status=fetched.http_status,
            fetched_bytes=len(fetched.body),
            truncated=fetched.truncated,
            tier="pdf" if fetched.kind is Kind.PDF else "fetch",
            fetch_ms=fetch_ms,
            extract_ms=int((loop.time() - start) * 1000) - fetch_ms,
        )
        return result, fetched

    async def extract(
        self,
        body: bytes,
        *,
        url: str = "",
        content_type: str = "",
        deadline_s: float | None = None,
        key: str = "",
    ) -> ReadResult:
        """Extract a document the caller already has (no network).

        Raises:
            Overloaded: the extraction queue is full.
        """
        kind = kind_of(content_type) if content_type.strip() else (sniff(body[:1024]) or Kind.HTML)
        if kind is None or (kind is not Kind.PDF and looks_binary(body)):
            return ReadResult(Status.UNSUPPORTED, url, error="unsupported content type")
        cap = self._settings.max_bytes
        truncated = len(body) > cap
        if truncated and kind is Kind.PDF:
            return ReadResult(Status.TOO_LARGE, url, error="PDF larger than the byte cap")
        charset = header_charset(content_type)
        page_url = url if 0 < len(url) <= MAX_URL_LENGTH else ""
        try:
            async with asyncio.timeout(self._budget(None, deadline_s)):
                job = self._job(body[:cap], kind, page_url, charset)
                extracted = await self._extract(job, None, key)
        except TimeoutError:
            return ReadResult(Status.TIMEOUT, url, error="timed out")
        except ReadFailure as failure:
            return ReadResult(failure.status, url, error=failure.reason)
        return _result(
            url,
            extracted,
            final_url=url,
            content_type=content_type or kind.value,
            fetched_bytes=len(body),
            truncated=truncated,
        )

    def _job(self, body: bytes, kind: Kind, url: str, charset: str | None) -> Job:
        if kind is not Kind.PDF:
            return Job(body, kind, url, charset)
        s = self._settings
        return Job(body, kind, url, charset, s.pdf_max_pages, s.pdf_timeout_s)

    async def _extract(self, job: Job, timeout_s: float | None, key: str) -> Extracted:
        heavy = job.kind is Kind.PDF
        if heavy:  # the in-worker bound stops between pages; this one kills a stuck page
            limit = self._settings.pdf_timeout_s + PDF_KILL_MARGIN_S
            timeout_s = limit if timeout_s is None else min(timeout_s, limit)
        try:
            extracted: Extracted = await self._pool.run(job, timeout_s, key=key, heavy=heavy)
        except ExtractionTimeout:
            raise ReadFailure(Status.TIMEOUT, "extraction timed out") from None
        except (ExtractionFailed, WorkerCrashed):
            raise ReadFailure(Status.EMPTY, "extraction failed") from None
        return extracted


def _failed(url: str, failure: ReadFailure, fetched: Fetched | None) -> ReadResult:
    """A non-OK result, keeping what is known about the response when it was fetched."""
    if fetched is None:
        return ReadResult(
            failure.status, url, error=failure.reason, http_status=failure.http_status, tier="fetch"
        )
    return ReadResult(
        failure.status,
        url,
        error=failure.reason,
        final_url=fetched.final_url,
        content_type=fetched.content_type,
        http_status=fetched.http_status,
        fetched_bytes=len(fetched.body),
        truncated=fetched.truncated,
        tier="pdf" if fetched.kind is Kind.PDF else "fetch",
    )


def _result(url: str, extracted: Extracted, **fields: Any) -> ReadResult:
    if not extracted.markdown.strip():
        return ReadResult(Status.EMPTY, url, error="no main content", extracted=extracted, **fields)
    return ReadResult(Status.OK, url, extracted=extracted, **fields)
