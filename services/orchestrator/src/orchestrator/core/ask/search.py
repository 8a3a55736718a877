"""Steps 2-3: search the web backends and/or the local corpus for each query, then rerank."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from orchestrator.core.ask import sieve, versions
from orchestrator.core.ask.domain import (
    CorpusError,
    RankerUnavailable,
    SearchFailed,
    SearchHit,
    SearchResponse,
)
from orchestrator.core.ask.evidence import snippet_of
from orchestrator.core.ask.fusion import rrf
from orchestrator.core.ask.routing import Route, route
from orchestrator.core.ask.state import RunState
from orchestrator.core.errors import RunFailed
from orchestrator.core.policy import SEARCH_OFF

logger = logging.getLogger(__name__)
# Results ranked past the kept ones, so a release-note page among the kept can give way
# (core/ask/versions.py).
RELEASE_NOTES_SLACK = 2


def _route(state: RunState) -> Route:
    """The request's categories / time range, else the routing rules' pick (when enabled)."""
    opts = state.options
    picked = route(state.question) if state.settings.search_routing else Route()
    return Route(opts.categories or picked.category, opts.time_range or picked.time_range)


async def _one(state: RunState, query: str) -> SearchResponse | SearchFailed:
    start = time.perf_counter()
    opts = state.options
    where = _route(state)
    try:
        async with asyncio.timeout(state.research_left()):
            response = await _search(state, query, where)
            if not response.hits and where != Route(opts.categories, opts.time_range):
                # The routed category or time range found nothing: ask as the user asked.
                where = Route(opts.categories, opts.time_range)
                response = await _search(state, query, where)
    except SearchFailed as err:
        logger.warning("search failed", extra={"round": state.rounds, "error": str(err)})
        return err
    except TimeoutError:
        return SearchFailed(
            "The search did not answer within the question's time budget.", "", "timeout"
        )
    state.sink.emit(
        "search.completed",
        {
            "round": state.rounds,
            "query": query,
            "source": "web",
            "backend": response.backend,
            "count": len(response.hits),
            "categories": where.category,
            "time_range": where.time_range,
            "cached": response.cached,
            "quota": dict(response.quota),
            "unresponsive_engines": list(response.unresponsive_engines),
            "ms": round((time.perf_counter() - start) * 1000, 1),
        },
    )
    return response


async def _search(state: RunState, query: str, where: Route) -> SearchResponse:
    opts = state.options
    return await state.deps.searcher.search(
        sieve.web_query(state, query),
        categories=where.category,
        language=opts.language,
        time_range=where.time_range,
        engines=opts.engines or None,
        pageno=opts.pageno,
        cache=opts.search_cache is not False,
    )


async def _local(state: RunState, query: str) -> list[SearchHit] | CorpusError:
    """Search the local documents' index (nothing leaves the machine): its best passage per
    document becomes the hit's snippet; the passages are kept for the evidence."""
    start = time.perf_counter()
    corpus = state.deps.corpus
    if corpus is None:
        return CorpusError("UNAVAILABLE", "Local documents are not configured.")
    cap = state.settings.ranker_timeout_s
    try:
        async with asyncio.timeout(state.research_left(cap)):
            found = await corpus.search_passages(
                [query],
                top_k=state.settings.corpus_top_k,
                max_per_document=1,
                timeout=state.research_left(cap),
                id_prefix=state.options.scope,
                id_prefixes=state.options.visible,
            )
    except CorpusError as err:
        return err
    except TimeoutError:
        return CorpusError("DEADLINE_EXCEEDED", "The local documents search timed out.")
    state.remember_local(found.passages)
    hits = [
        SearchHit(p.url, p.title, snippet_of(p.text), n, ("local",), score=p.score, source="local")
        for n, p in enumerate(found.passages, start=1)
    ]
    state.sink.emit(
        "search.completed",
        {
            "round": state.rounds,
            "query": query,
            "source": "local",
            "backend": "local",
            "retrieval": found.retrieval,
            "count": len(hits),
            "unresponsive_engines": [],
            "ms": round((time.perf_counter() - start) * 1000, 1),
        },
    )
    return hits


Outcome = SearchResponse | SearchFailed | list[SearchHit] | CorpusError


def _warn_failures(state: RunState, outcomes: list[Outcome]) -> None:
    web_errors = [o for o in outcomes if isinstance(o, SearchFailed)]
    local_errors = [o for o in outcomes if isinstance(o, CorpusError)]
    if web_errors:
        state.sink.warn("search_partial", f"Some searches failed: {web_errors[0]}")
    if local_errors:
        state.sink.warn(
            "local_unavailable", f"Local documents could not be searched: {local_errors[0]}"
        )
    responses = [o for o in outcomes if isinstance(o, SearchResponse)]
    engines = _engine_problems(responses)
    if engines:
        state.sink.warn(
            "unresponsive_engines",
            "Search engines did not answer (results may be thinner): " + ", ".join(engines),
        )


def _engine_problems(responses: list[SearchResponse]) -> list[str]:
    """``name (reason)`` per engine SearXNG reported, e.g. ``google (CAPTCHA)``."""
    reasons: dict[str, str] = {}
    for response in responses:
        for name in response.unresponsive_engines:
            reasons.setdefault(name, "")
        for name, reason in response.unresponsive_reasons:
            if reason:
                reasons[name] = reason
    return [f"{n} ({r})" if r else n for n, r in sorted(reasons.items())]


async def search_step(state: RunState, queries: Sequence[str]) -> list[SearchHit]:
    """Search every query in every source at once; return results this run has not seen.

    With both sources, each query's web and local lists are fused by reciprocal rank fusion
    into one engine order (the ranker then reranks it).

    The run's sources pass the sources policy once more here, the one step every search goes
    through: a research run stored while web search was on and resumed after it was turned off
    must not reach the web either. The domain policy applies here too (core/ask/sieve.py): as
    operators in the web query, then on every result.

    Raises:
        RunFailed: every search failed (SearXNG down, the corpus unavailable, or too slow), or
            no source is left to search (``search_off``).
    """
    allowed = state.settings.allowed_sources(state.options.sources)
    sources = [s for s in ("web", "local") if s in allowed]
    if not sources:
        raise RunFailed("search_off", SEARCH_OFF)
    sieve.announce(state, queries)
    with state.stage("search", queries=len(queries), sources=",".join(sources)) as span:
        tasks: list[list[asyncio.Task[Outcome]]] = []
        async with asyncio.TaskGroup() as tg:
            for query in queries:
                per_query: list[asyncio.Task[Outcome]] = []
                for source in sources:
                    state.sink.emit(
                        "search.started", {"round": state.rounds, "query": query, "source": source}
                    )
                    search = _one if source == "web" else _local
                    per_query.append(tg.create_task(search(state, query)))
                tasks.append(per_query)
        outcomes = [t.result() for per_query in tasks for t in per_query]
        failed = [o for o in outcomes if isinstance(o, SearchFailed | CorpusError)]
        if len(failed) == len(outcomes):
            raise RunFailed("search_unavailable", str(failed[0]))
        _warn_failures(state, outcomes)
        unseen: list[SearchHit] = []
        for per_query in tasks:
            lists = [_hits(t.result()) for t in per_query]
            fused = rrf(lists) if len(lists) > 1 else lists[0]
            for hit in fused:
                if hit.url and hit.url not in state.seen_urls:
                    state.seen_urls.add(hit.url)
                    unseen.append(hit)
        # a refused result is seen too: it is reported once per run, not once per round
        new = sieve.keep_allowed(state, unseen)
        span.set_attribute("ae.results", len(new))
        span.set_attribute("ae.failed_queries", len(failed))
    return new


def _hits(outcome: Outcome) -> list[SearchHit]:
    if isinstance(outcome, SearchResponse):
        return outcome.hits
    if isinstance(outcome, list):
        return outcome
    return []


async def _ranked(
    state: RunState, hits: list[SearchHit], query: str, top_k: int
) -> list[SearchHit]:
    """``hits`` reranked for ``query``; for a question asking two things (``state.parts``, in
    its first round) the lists for the whole question and for each part taken in turn, so
    each part's best page is kept (ranked for the joined query, the first part's pages
    crowded out the second's)."""
    ranker = state.deps.ranker
    timeout = state.research_left(state.settings.ranker_timeout_s)
    queries = [query, *state.parts] if state.parts and state.rounds == 1 else [query]
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [
                tg.create_task(ranker.rank_results(q, hits, top_k=top_k, timeout=timeout))
                for q in queries
            ]
    except* RankerUnavailable as failed:  # one failure is the ranker's: engine order
        raise failed.exceptions[0] from None
    lists = [t.result() for t in tasks]
    out: dict[str, SearchHit] = {}
    for rank in range(max(len(found) for found in lists)):
        for found in lists:
            if rank < len(found):
                out.setdefault(found[rank].url, found[rank])
    return list(out.values())[:top_k]


async def rank_step(state: RunState, hits: list[SearchHit], query: str) -> list[SearchHit]:
    """Rerank ``hits`` with the ranker and keep the top URLs; engine order if it fails."""
    top = state.top_urls
    by = "ranker"
    with state.stage("rank", results=len(hits)) as span:
        if not hits:
            ranked: list[SearchHit] = []
        else:
            try:
                async with asyncio.timeout(state.research_left(state.settings.ranker_timeout_s)):
                    ranked = await _ranked(state, hits, query, top + RELEASE_NOTES_SLACK)
            except (RankerUnavailable, TimeoutError):
                by = "engine"
                state.sink.warn(
                    "ranker_unavailable",
                    "The ranker is unavailable; using the search engine's order.",
                )
                ranked = sorted(hits, key=lambda h: h.engine_rank)
        # Past releases' pages below the current reference for a present-tense question.
        ranked = versions.current_first(ranked, state.question)[:top]
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
