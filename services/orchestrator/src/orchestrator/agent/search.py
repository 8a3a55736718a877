"""Steps 2-3: search SearXNG for each query, then rerank the new results."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from orchestrator.agent.ports import Searcher
from orchestrator.agent.state import RunState
from orchestrator.clients.ranker import RankerUnavailable
from orchestrator.clients.searxng_types import SearchHit, SearchResponse, SearxngError
from orchestrator.errors import RunFailed

logger = logging.getLogger(__name__)


class LimitedSearcher:
    """A searcher behind the process-wide SearXNG semaphore."""

    def __init__(self, inner: Searcher, limit: asyncio.Semaphore) -> None:
        self._inner = inner
        self._limit = limit

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
    ) -> SearchResponse:
        """Search once the semaphore admits the call."""
        async with self._limit:
            return await self._inner.search(
                query, categories=categories, language=language, time_range=time_range
            )


async def _one(state: RunState, query: str) -> SearchResponse | SearxngError:
    start = time.perf_counter()
    opts = state.options
    try:
        async with asyncio.timeout(state.research_left()):
            response = await state.deps.searcher.search(
                query,
                categories=opts.categories,
                language=opts.language,
                time_range=opts.time_range,
            )
    except SearxngError as err:
        logger.warning("search failed", extra={"round": state.rounds, "error": str(err)})
        return err
    except TimeoutError:
        return SearxngError("SearXNG did not answer within the question's time budget.", "")
    state.sink.emit(
        "search.completed",
        {
            "round": state.rounds,
            "query": query,
            "count": len(response.hits),
            "unresponsive_engines": list(response.unresponsive_engines),
            "ms": round((time.perf_counter() - start) * 1000, 1),
        },
    )
    return response


async def search_step(state: RunState, queries: Sequence[str]) -> list[SearchHit]:
    """Search every query at once; return results whose URL this run has not seen.

    Raises:
        RunFailed: every query failed (SearXNG down, refusing JSON, or too slow).
    """
    with state.stage("search", queries=len(queries)) as span:
        for query in queries:
            state.sink.emit("search.started", {"round": state.rounds, "query": query})
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(_one(state, q)) for q in queries]
        outcomes = [t.result() for t in tasks]
        responses = [o for o in outcomes if isinstance(o, SearchResponse)]
        errors = [o for o in outcomes if isinstance(o, SearxngError)]
        if not responses:
            raise RunFailed("search_unavailable", str(errors[0]))
        if errors:
            state.sink.warn("search_partial", f"Some searches failed: {errors[0]}")
        engines = sorted({e for r in responses for e in r.unresponsive_engines})
        if engines:
            state.sink.warn(
                "unresponsive_engines", "Search engines did not answer: " + ", ".join(engines)
            )
        new: list[SearchHit] = []
        for response in responses:
            for hit in response.hits:
                if hit.url and hit.url not in state.seen_urls:
                    state.seen_urls.add(hit.url)
                    new.append(hit)
        span.set_attribute("ae.results", len(new))
        span.set_attribute("ae.failed_queries", len(errors))
    return new


async def rank_step(state: RunState, hits: list[SearchHit], query: str) -> list[SearchHit]:
    """Rerank ``hits`` with the ranker and keep the top URLs; engine order if it fails."""
    top = state.settings.top_urls
    by = "ranker"
    with state.stage("rank", results=len(hits)) as span:
        if not hits:
            ranked: list[SearchHit] = []
        else:
            try:
                async with asyncio.timeout(state.research_left(state.settings.ranker_timeout_s)):
                    ranked = await state.deps.ranker.rank_results(
                        query,
                        hits,
                        top_k=top,
                        timeout=state.research_left(state.settings.ranker_timeout_s),
                    )
            except (RankerUnavailable, TimeoutError):
                by = "engine"
                state.sink.warn(
                    "ranker_unavailable",
                    "The ranker is unavailable; using the search engine's order.",
                )
                ranked = sorted(hits, key=lambda h: h.engine_rank)[:top]
        span.set_attribute("ae.kept", len(ranked))
        span.set_attribute("ae.ranked_by", by)
    state.sink.emit(
        "rank.completed",
        {
            "round": state.rounds,
            "count": len(hits),
            "kept": len(ranked),
            "ranked_by": by,
            "urls": [h.url for h in ranked],
        },
    )
    return ranked
