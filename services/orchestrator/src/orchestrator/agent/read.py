"""Steps 5-6: read pages through the reader (bounded, deadlined), then pick the best chunks."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from orchestrator.agent.domain import (
    CorpusError,
    PageRead,
    PageText,
    Passage,
    RankerUnavailable,
    ReaderUnavailable,
)
from orchestrator.agent.evidence import CHARS_PER_TOKEN
from orchestrator.agent.fusion import origin_of
from orchestrator.agent.state import RunState

logger = logging.getLogger(__name__)

# Without the ranker, each page contributes its opening text, trimmed to this many characters.
FALLBACK_CHUNK_CHARS = 2000


async def _read_local(state: RunState, url: str) -> PageRead:
    """A corpus document's stored text (GetDocument): never fetched, never sent anywhere."""
    corpus = state.deps.corpus
    start = time.monotonic()
    if corpus is None:
        return PageRead(url, "RPC_ERROR", error="UNAVAILABLE")
    cap = state.settings.read_timeout_s
    try:
        async with asyncio.timeout(state.research_left(cap)):
            doc = await corpus.get(url, timeout=state.research_left(cap))
    except CorpusError as err:
        return PageRead(url, "RPC_ERROR", error=err.code)
    except TimeoutError:
        return PageRead(url, "TIMEOUT")
    ms = int((time.monotonic() - start) * 1000)
    if doc is None:
        return PageRead(url, "RPC_ERROR", error="NOT_FOUND", ms=ms)
    status = "OK" if doc.markdown.strip() else "EMPTY"
    return PageRead(url, status, title=doc.title, markdown=doc.markdown, final_url=url, ms=ms)


async def _read_one(state: RunState, url: str, limit: asyncio.Semaphore) -> None:
    async with limit:
        if origin_of(url) == "local":
            page = await _read_local(state, url)
        elif state.reader_down:
            page = PageRead(url, "UNAVAILABLE")
        else:
            try:
                page = await state.deps.reader.read(
                    url, timeout=state.research_left(state.settings.read_timeout_s)
                )
            except ReaderUnavailable as err:
                # One UNAVAILABLE answer (after its retry) is enough: skip the other URLs.
                state.reader_down = True
                page = PageRead(url, "UNAVAILABLE", error=err.code)
    if page.usable:
        state.pages[url] = page
    state.sink.emit(
        "read.completed",
        {
            "round": state.rounds,
            "url": url,
            "status": page.status,
            "ms": page.ms,
            "title": page.title,
            "cached": page.cached,
            "attempts": page.attempts,
            "origin": origin_of(url),
        },
    )


async def read_pages(state: RunState, urls: Sequence[str], *, speculative: bool) -> None:
    """Read the URLs not read before: ``read_concurrency`` at a time, within the batch timeout."""
    todo = [u for u in dict.fromkeys(urls) if u not in state.attempted]
    if not todo:
        return
    state.attempted.update(todo)
    state.sink.emit(
        "read.started",
        {"round": state.rounds, "urls": todo, "count": len(todo), "speculative": speculative},
    )
    limit = asyncio.Semaphore(state.settings.read_concurrency)
    before = len(state.pages)
    with state.stage("read", urls=len(todo), speculative=speculative) as span:
        try:
            async with asyncio.timeout(state.research_left(state.settings.read_batch_timeout_s)):
                async with asyncio.TaskGroup() as tg:
                    for url in todo:
                        tg.create_task(_read_one(state, url, limit))
        except TimeoutError:
            state.sink.warn(
                "read_timeout", "Reading pages took too long; using the pages read so far."
            )
        span.set_attribute("ae.pages_ok", len(state.pages) - before)
        span.set_attribute("ae.reader_down", state.reader_down)


async def cancel_and_wait(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` and wait until it has finished (its own errors are logged, not raised)."""
    if not task.done():
        task.cancel()
    await asyncio.wait([task])
    if not task.cancelled() and task.exception() is not None:
        logger.error("background task failed", exc_info=task.exception())


def _fallback_chunks(pages: Sequence[PageRead], top_k: int) -> list[Passage]:
    return [Passage(p.url, p.title, p.markdown[:FALLBACK_CHUNK_CHARS]) for p in pages[:top_k]]


def _fallback_passages(pages: Sequence[PageRead], budget_tokens: int) -> list[Passage]:
    """Each page's opening, in page order, within the budget (the ranker is down)."""
    out: list[Passage] = []
    left = budget_tokens * CHARS_PER_TOKEN
    for p in pages:
        if left < 200:
            break
        text = p.markdown[: min(FALLBACK_CHUNK_CHARS, left)]
        out.append(Passage(p.final_url or p.url, p.title, text))
        left -= len(text)
    return out


async def _rank(state: RunState, pages: list[PageText], timeout: float) -> list[Passage]:
    ranker = state.deps.ranker
    if state.settings.evidence == "chunk_per_url":
        return await ranker.rank_chunks(
            state.question, pages, top_k=state.evidence_sources, timeout=timeout
        )
    return await ranker.rank_passages(
        state.queries or [state.question],
        pages,
        budget_tokens=state.passage_budget(),
        passage_words=state.settings.passage_words,
        timeout=timeout,
    )


async def chunks_step(state: RunState) -> None:
    """Rank passages over every page read so far; page order if the ranker fails.

    ``chunk_per_url`` asks for one chunk per URL against the question; ``passages`` for
    passages against every query so far, within the evidence budget.
    """
    pages = list(state.pages.values())
    by = "ranker"
    with state.stage("chunks", pages=len(pages)) as span:
        cap = state.settings.ranker_timeout_s
        texts = [PageText(p.final_url or p.url, p.title, p.markdown) for p in pages]
        try:
            async with asyncio.timeout(state.research_left(cap)):
                state.chunks = await _rank(state, texts, state.research_left(cap))
        except (RankerUnavailable, TimeoutError):
            by = "page_order"
            state.sink.warn(
                "ranker_unavailable", "The ranker is unavailable; using the search engine's order."
            )
            if state.settings.evidence == "chunk_per_url":
                state.chunks = _fallback_chunks(pages, state.evidence_sources)
            else:
                state.chunks = _fallback_passages(pages, state.passage_budget())
        span.set_attribute("ae.chunks", len(state.chunks))
    state.sink.emit(
        "chunks.ranked",
        {
            "round": state.rounds,
            "pages": len(pages),
            "count": len(state.chunks),
            "ranked_by": by,
            "urls": [c.url for c in state.chunks],
        },
    )
