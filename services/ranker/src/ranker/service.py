"""RankerServicer: maps proto messages to the domain modules and errors to status codes."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Mapping
from typing import TypeVar

import grpc
from opentelemetry import trace
from quarry.v1 import ranker_pb2, ranker_pb2_grpc
from quarry_common.threads import in_thread
from quarry_embed import CachedEmbedder, load_or_none
from quarry_rerank import Reranker, SupportChecker, label_for
from quarry_text.analyzer import Analyzer, AnalyzerConfig
from quarry_text.chunking import Page

from ranker.bounds import check_query
from ranker.chunks import ChunksParams, rank_chunks
from ranker.config import Settings
from ranker.errors import BoundExceededError, InvalidRequestError
from ranker.model import RankedResult, ScoredChunk, SearchResult
from ranker.passages import Embeds, PassageParams
from ranker.passages_rpc import PageCache, PassageRpcs
from ranker.rerank import RerankParams
from ranker.results import ResultsParams, rank_results
from ranker.support_rpc import check_support

logger = logging.getLogger(__name__)

MAX_RESULTS = 500
MAX_PAGES = 200
MAX_CHUNKS = 20_000
MAX_FIELD_WEIGHT = 100.0
MIN_CHUNK_WORDS, MAX_CHUNK_WORDS = 16, 10_000
# Far beyond any real URL, title or engine snippet: such a field is a caller's bug.
MAX_URL_CHARS, MAX_TITLE_CHARS, MAX_SNIPPET_CHARS = 8192, 2000, 10_000
# Below this much text RankResults runs on the event loop: a thread hop costs more.
INLINE_RESULTS_CHARS = 100_000

T = TypeVar("T")
ResultsContext = grpc.aio.ServicerContext[
    ranker_pb2.RankResultsRequest, ranker_pb2.RankResultsResponse
]
ChunksContext = grpc.aio.ServicerContext[
    ranker_pb2.RankChunksRequest, ranker_pb2.RankChunksResponse
]
PassagesContext = grpc.aio.ServicerContext[
    ranker_pb2.RankPassagesRequest, ranker_pb2.RankPassagesResponse
]
PrepareContext = grpc.aio.ServicerContext[
    ranker_pb2.PreparePassagesRequest, ranker_pb2.PreparePassagesResponse
]
SupportContext = grpc.aio.ServicerContext[
    ranker_pb2.CheckSupportRequest, ranker_pb2.CheckSupportResponse
]


def _weight(request: ranker_pb2.RankResultsRequest, name: str, default: float) -> float:
    if not request.HasField(name):
        return default
    value = float(getattr(request, name))
    if not math.isfinite(value) or not 0.0 <= value <= MAX_FIELD_WEIGHT:
        raise InvalidRequestError(f"{name} must be between 0 and {MAX_FIELD_WEIGHT:g}")
    return value


def results_from_proto(
    analyzer: Analyzer, request: ranker_pb2.RankResultsRequest
) -> tuple[list[SearchResult], ResultsParams]:
    """Validate a RankResultsRequest and map it to domain values."""
    if len(request.results) > MAX_RESULTS:
        raise BoundExceededError(f"more than {MAX_RESULTS} results")
    check_query(analyzer, request.query)
    results = []
    for i, r in enumerate(request.results):
        if not r.url.strip():
            raise InvalidRequestError(f"results[{i}].url is empty")
        for field, limit in (
            ("url", MAX_URL_CHARS),
            ("title", MAX_TITLE_CHARS),
            ("snippet", MAX_SNIPPET_CHARS),
        ):
            if len(getattr(r, field)) > limit:
                raise BoundExceededError(f"results[{i}].{field} is longer than {limit} characters")
        results.append(
            SearchResult(
                url=r.url,
                title=r.title,
                snippet=r.snippet,
                engine_rank=r.engine_rank,
                engines=tuple(r.engines),
                published=r.published,
                source=r.source,
            )
        )
    params = ResultsParams(
        title_weight=_weight(request, "title_weight", 2.0),
        snippet_weight=_weight(request, "snippet_weight", 1.0),
        rrf_k=request.rrf_k if request.HasField("rrf_k") else 60,
        top_k=request.top_k,
    )
    return results, params


def chunks_from_proto(
    analyzer: Analyzer, request: ranker_pb2.RankChunksRequest
) -> tuple[list[Page], ChunksParams]:
    """Validate a RankChunksRequest and map it to domain values."""
    if len(request.pages) > MAX_PAGES:
        raise BoundExceededError(f"more than {MAX_PAGES} pages")
    check_query(analyzer, request.query)
    chunk_words = request.chunk_words if request.HasField("chunk_words") else 500
    if not MIN_CHUNK_WORDS <= chunk_words <= MAX_CHUNK_WORDS:
        raise InvalidRequestError(
            f"chunk_words must be between {MIN_CHUNK_WORDS} and {MAX_CHUNK_WORDS}"
        )
    pages = []
    for i, p in enumerate(request.pages):
        if not p.url.strip():
            raise InvalidRequestError(f"pages[{i}].url is empty")
        if len(p.url) > MAX_URL_CHARS:
            raise BoundExceededError(f"pages[{i}].url is longer than {MAX_URL_CHARS} characters")
        pages.append(Page(url=p.url, title=p.title, markdown=p.markdown))
    params = ChunksParams(
        top_k=request.top_k if request.HasField("top_k") else 8,
        chunk_words=chunk_words,
        one_per_url=request.one_per_url if request.HasField("one_per_url") else True,
        max_chunks=MAX_CHUNKS,
    )
    return pages, params


def ranked_to_proto(
    ranked: list[RankedResult],
    total: int,
    originals: Mapping[int, ranker_pb2.SearchResult] | None = None,
) -> ranker_pb2.RankResultsResponse:
    """Map fused results to a RankResultsResponse; ``originals`` maps ``id()`` of an
    unmerged domain result to the request's message, copied as is (cheaper)."""
    reply = ranker_pb2.RankResultsResponse(total=total)
    for item in ranked:
        r = item.result
        out = reply.results.add(bm25f_score=item.bm25f_score, rrf_score=item.rrf_score)
        out.rank = item.rank
        if item.lexical_rank is not None:
            out.lexical_rank = item.lexical_rank
        original = originals.get(id(r)) if originals else None
        if original is not None:
            out.result.CopyFrom(original)
            continue
        out.result.url = r.url
        out.result.title = r.title
        out.result.snippet = r.snippet
        out.result.engine_rank = r.engine_rank
        out.result.engines.extend(r.engines)
        out.result.published = r.published
        out.result.source = r.source
    return reply


def chunks_to_proto(chunks: list[ScoredChunk], total: int) -> ranker_pb2.RankChunksResponse:
    """Map ranked chunks to a RankChunksResponse."""
    reply = ranker_pb2.RankChunksResponse(total_chunks=total)
    for sc in chunks:
        c = sc.chunk
        reply.chunks.add(url=c.url, title=c.title, text=c.text, score=sc.score, index=c.index)
    return reply


class RankerServicer(ranker_pb2_grpc.RankerServicer):
    """The ranker's RPCs; CPU-heavy work runs in worker threads so health keeps answering."""

    def __init__(self, settings: Settings) -> None:
        self._analyzer = Analyzer(AnalyzerConfig(stem=settings.stem, stopwords=settings.stopwords))
        self._cpu = asyncio.Semaphore(settings.cpu_concurrency)
        self._settings = settings
        self._embedder: Embeds | None = None
        # Both reuse the embedding model (and its vector cache): loaded with it.
        self._reranker: Reranker | None = None
        self._support: SupportChecker | None = None
        self._prepare_slots = asyncio.Semaphore(settings.prepare_concurrency)
        self._passages = PassageRpcs(
            self._analyzer,
            self._in_thread,
            cache=PageCache(settings.page_cache),
            embedder=lambda: self._embedder,
            defaults=PassageParams(
                dense_candidates=settings.dense_candidates, dense_seconds=settings.dense_seconds
            ),
            prepare_in_thread=lambda fn: in_thread(self._prepare_slots, fn),
            prepare_candidates=settings.prepare_candidates,
            reranker=lambda: self._reranker,
            rerank_params=RerankParams(
                enabled=settings.rerank,
                candidates=settings.rerank_candidates,
                seconds=settings.rerank_seconds,
            ),
        )

    async def warm_up(self) -> None:
        """Load the embedding model and run each code path once (numpy, bm25s, the stemmer)
        before reporting SERVING."""
        if self._settings.dense:
            self._embedder = await asyncio.to_thread(self._load_embedder)
        if self._embedder is not None:
            self._reranker = Reranker(self._embedder)
            self._support = SupportChecker(self._embedder)
        page = Page("https://warm.up/", "warm up", "# Warm up\n\nRanking warms up the ranker.")
        result = SearchResult("https://warm.up/", "warm up", "ranking warms up", 1)
        await self._in_thread(lambda: rank_chunks(self._analyzer, "ranking", [page]))
        rank_results(self._analyzer, "ranking", [result])

    def _load_embedder(self) -> Embeds | None:
        """The cached embedder, or None (with a warning) when the model cannot load."""
        s = self._settings
        # Small onnxruntime batches: 32 texts per run held ~1.1 GB resident against ~0.3 GB
        # with 4, at the same speed (measured by the index service), and compose gives 768m.
        model = load_or_none(threads=s.embed_threads, batch_size=4)
        if model is None:
            return None
        cached = CachedEmbedder(model, max_entries=s.embed_cache)
        cached.embed(["warm up"])
        return cached

    async def _in_thread(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a worker thread, at most ``cpu_concurrency`` at once."""
        return await in_thread(self._cpu, fn)

    async def RankResults(
        self, request: ranker_pb2.RankResultsRequest, context: ResultsContext
    ) -> ranker_pb2.RankResultsResponse:
        """Fuse BM25F over title and snippet with the engine order (RRF)."""
        try:
            results, params = results_from_proto(self._analyzer, request)
            size = sum(len(r.title) + len(r.snippet) for r in results)
            trace.get_current_span().set_attribute("quarry.ranker.results", len(results))

            def run() -> tuple[list[RankedResult], int]:
                return rank_results(self._analyzer, request.query, results, params)

            ranked, total = run() if size < INLINE_RESULTS_CHARS else await self._in_thread(run)
            originals = {id(r): m for r, m in zip(results, request.results, strict=True)}
        except InvalidRequestError as err:
            logger.info("rejected RankResults", extra={"reason": str(err)})
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        except Exception:  # anything else is our bug: log it, answer generically
            logger.exception("RankResults failed")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error")
        return ranked_to_proto(ranked, total, originals)

    async def RankChunks(
        self, request: ranker_pb2.RankChunksRequest, context: ChunksContext
    ) -> ranker_pb2.RankChunksResponse:
        """Chunk the pages and return the best chunks by BM25."""
        try:
            pages, params = chunks_from_proto(self._analyzer, request)
            trace.get_current_span().set_attribute("quarry.ranker.pages", len(pages))

            def run() -> tuple[list[ScoredChunk], int]:
                return rank_chunks(self._analyzer, request.query, pages, params)

            chunks, total = await self._in_thread(run)
            trace.get_current_span().set_attribute("quarry.ranker.chunks", total)
        except InvalidRequestError as err:
            logger.info("rejected RankChunks", extra={"reason": str(err)})
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        except Exception:  # anything else is our bug: log it, answer generically
            logger.exception("RankChunks failed")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error")
        return chunks_to_proto(chunks, total)

    async def RankPassages(
        self, request: ranker_pb2.RankPassagesRequest, context: PassagesContext
    ) -> ranker_pb2.RankPassagesResponse:
        """The evidence for a question: passages by BM25 + dense (RRF) within a budget."""
        return await self._passages.rank(request, context)

    async def PreparePassages(
        self, request: ranker_pb2.PreparePassagesRequest, context: PrepareContext
    ) -> ranker_pb2.PreparePassagesResponse:
        """Split pages and embed their likely candidates ahead of RankPassages."""
        return await self._passages.prepare(request, context)

    async def CheckSupport(
        self, request: ranker_pb2.CheckSupportRequest, context: SupportContext
    ) -> ranker_pb2.CheckSupportResponse:
        """Score answer sentences against the passages they cite."""
        return await check_support(request, context, self._support, label_for, self._in_thread)
