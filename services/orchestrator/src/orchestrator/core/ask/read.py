"""Steps 5-6: read web pages through the reader (bounded, deadlined), then pick the passages.

Web pages' passages come from the ranker (RankPassages over the pages read); local documents'
from the index (SearchPassages: chunked and embedded at commit), both for every query so far;
the two ranked lists are merged by rank into one evidence budget.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from orchestrator.core.ask import evidence
from orchestrator.core.ask.domain import (
    CorpusError,
    PageRead,
    PageText,
    Passage,
    RankerUnavailable,
    ReaderUnavailable,
)
from orchestrator.core.ask.evidence import CHARS_PER_TOKEN
from orchestrator.core.ask.expand import keyword_query
from orchestrator.core.ask.fusion import fuse_passages, origin_of
from orchestrator.core.ask.state import RunState

logger = logging.getLogger(__name__)

# Without the ranker, each page contributes its opening text, trimmed to this many characters.
FALLBACK_CHUNK_CHARS = 2000


async def _prepare(state: RunState, page: PageRead) -> None:
    """PreparePassages for one page just read (best effort: a failure only means
    RankPassages embeds its passages itself)."""
    text = PageText(page.final_url or page.url, page.title, page.markdown)
    cap = state.settings.ranker_timeout_s
    try:
        await state.deps.ranker.prepare_passages(
            state.queries or [state.question],
            [text],
            passage_words=state.settings.passage_words,
            timeout=state.research_left(cap),
        )
    except RankerUnavailable as err:
        logger.info("prepare passages failed", extra={"url": page.url, "error": str(err)})


async def _read_one(
    state: RunState, url: str, limit: asyncio.Semaphore, preparing: list[asyncio.Task[None]]
) -> None:
    async with limit:
        if state.reader_down:
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
        if state.settings.evidence == "passages" and state.settings.prepare_passages:
            preparing.append(asyncio.create_task(_prepare(state, page)))
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
            **({"tier": page.tier} if page.tier else {}),
            **({"render": page.render} if page.render is not None else {}),
        },
    )


async def read_pages(state: RunState, urls: Sequence[str], *, speculative: bool) -> None:
    """Read the URLs not read before: ``read_concurrency`` at a time, within the batch timeout.

    Local documents are not read: the index serves their passages (chunks_step).
    """
    todo = [u for u in dict.fromkeys(urls) if u not in state.attempted]
    state.attempted.update(todo)
    for url in todo:
        if origin_of(url) == "local":
            state.local_docs[url] = None
    todo = [u for u in todo if origin_of(u) != "local"]
    if not todo:
        return
    state.sink.emit(
        "read.started",
        {"round": state.rounds, "urls": todo, "count": len(todo), "speculative": speculative},
    )
    limit = asyncio.Semaphore(state.settings.read_concurrency)
    before = len(state.pages)
    # Pages go to the ranker as they arrive; what is not prepared once the reads are done
    # is cancelled (what was embedded stays cached) and RankPassages does the rest.
    preparing: list[asyncio.Task[None]] = []
    with state.stage("read", urls=len(todo), speculative=speculative) as span:
        try:
            async with asyncio.timeout(state.research_left(state.settings.read_batch_timeout_s)):
                async with asyncio.TaskGroup() as tg:
                    for url in todo:
                        tg.create_task(_read_one(state, url, limit, preparing))
        except TimeoutError:
            state.sink.warn(
                "read_timeout", "Reading pages took too long; using the pages read so far."
            )
        finally:
            for task in preparing:
                await cancel_and_wait(task)
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


async def _rank_web(state: RunState, timeout: float) -> list[Passage]:
    """The ranker's passages over the web pages read so far (none read: none)."""
    pages = [PageText(p.final_url or p.url, p.title, p.markdown) for p in state.pages.values()]
    if not pages:
        return []
    ranker = state.deps.ranker
    if state.settings.evidence == "chunk_per_url":
        return await ranker.rank_chunks(
            state.question, pages, top_k=state.evidence_sources, timeout=timeout
        )
    if state.parts and state.rounds == 1:
        return await _rank_parts(state, pages, timeout)
    return await ranker.rank_passages(
        state.queries or [state.question],
        pages,
        budget_tokens=state.passage_budget(),
        passage_words=state.settings.passage_words,
        timeout=timeout,
    )


async def _rank_parts(state: RunState, pages: list[PageText], timeout: float) -> list[Passage]:
    """A question asking two things (``state.parts``): each part ranks the passages for its
    own share of the budget, and the lists are taken in turn. Ranked for every query at once,
    the passages of the part most of the question's words belong to filled the budget (in
    ``speed``, 900 tokens) and the other part's answer was read but never shown."""
    budget = state.passage_budget()
    share = max(evidence.MIN_PASSAGE_TOKENS, budget // len(state.parts))
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [
                tg.create_task(
                    state.deps.ranker.rank_passages(
                        [part, *([extra] if (extra := keyword_query(part)) else [])],
                        pages,
                        budget_tokens=share,
                        passage_words=state.settings.passage_words,
                        timeout=timeout,
                    )
                )
                for part in state.parts
            ]
    except* RankerUnavailable as failed:  # the ranker's failure: page order, as for one call
        raise failed.exceptions[0] from None
    lists = [t.result() for t in tasks]
    taken: dict[tuple[str, int], Passage] = {}
    for rank in range(max(len(found) for found in lists)):
        for found in lists:
            if rank < len(found):
                taken.setdefault((found[rank].url, found[rank].index), found[rank])
    return evidence.within_budget(list(taken.values()), budget)


def _local_top_k(state: RunState) -> int:
    """Passages to ask the index for: what the budget holds at ``passage_words`` (~1.3
    tokens a word), plus room for the merge; one per document for chunk_per_url."""
    if state.settings.evidence == "chunk_per_url":
        return state.evidence_sources
    per_passage = max(1, int(state.settings.passage_words * 1.3))
    return max(4, min(100, state.passage_budget() // per_passage + 4))


async def _web_passages(state: RunState) -> tuple[list[Passage], str]:
    """The web pages' passages and who ranked them (page order when the ranker fails)."""
    cap = state.settings.ranker_timeout_s
    try:
        async with asyncio.timeout(state.research_left(cap)):
            return await _rank_web(state, state.research_left(cap)), "ranker"
    except (RankerUnavailable, TimeoutError):
        state.sink.warn(
            "ranker_unavailable", "The ranker is unavailable; using the search engine's order."
        )
        pages = list(state.pages.values())
        if state.settings.evidence == "chunk_per_url":
            return _fallback_chunks(pages, state.evidence_sources), "page_order"
        return _fallback_passages(pages, state.passage_budget()), "page_order"


async def _local_passages(state: RunState) -> tuple[list[Passage], str]:
    """The index's passages for every query so far, and the retrieval it used; the passages
    found while searching (``search``) when it fails now."""
    corpus = state.deps.corpus
    if not state.local_docs or corpus is None:
        return [], ""
    per_doc = 1 if state.settings.evidence == "chunk_per_url" else 4
    cap = state.settings.ranker_timeout_s
    try:
        async with asyncio.timeout(state.research_left(cap)):
            found = await corpus.search_passages(
                (state.queries or [state.question])[-8:],  # the contract's limit: 8 queries
                top_k=_local_top_k(state),
                max_per_document=per_doc,
                timeout=state.research_left(cap),
                id_prefix=state.options.scope,
                id_prefixes=state.options.visible,
            )
    except (CorpusError, TimeoutError) as err:
        logger.warning("local passages failed", extra={"error": str(err)})
        state.sink.warn(
            "local_unavailable",
            "Local documents could not be searched again; using the passages found earlier.",
        )
        return sorted(state.local_passages.values(), key=lambda p: -p.score), "search"
    return found.passages, found.retrieval


def _merge(state: RunState, web: list[Passage], local: list[Passage]) -> list[Passage]:
    """One ranked list within the evidence budget (or the chunk count for chunk_per_url)."""
    if not local:
        return web
    merged = fuse_passages([web, local]) if web else local
    if state.settings.evidence == "chunk_per_url":
        return merged[: state.evidence_sources]
    return evidence.within_budget(merged, state.passage_budget())


async def chunks_step(state: RunState) -> None:
    """Rank passages over every page read so far and every local document found; the web's
    and the index's at once. Page order if the ranker fails.

    ``chunk_per_url`` asks for one chunk per URL against the question; ``passages`` for
    passages against every query so far, within the evidence budget.
    """
    with state.stage("chunks", pages=len(state.pages), local=len(state.local_docs)) as span:
        async with asyncio.TaskGroup() as tg:
            web_task = tg.create_task(_web_passages(state))
            local_task = tg.create_task(_local_passages(state))
        (web, by), (local, retrieval) = web_task.result(), local_task.result()
        state.chunks = _merge(state, web, local)
        span.set_attribute("ae.chunks", len(state.chunks))
    state.sink.emit(
        "chunks.ranked",
        {
            "round": state.rounds,
            "pages": len(state.pages),
            "local_documents": len(state.local_docs),
            "count": len(state.chunks),
            "ranked_by": by,
            "local_retrieval": retrieval,
            "urls": [c.url for c in state.chunks],
        },
    )
