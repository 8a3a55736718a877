"""RankPassages over gRPC: validation, the page cache, the embedder, and status codes.

Pages are cached prepared (split into passages) by ``(url, sha256 of the text)`` in a
bounded LRU, and their passages' vectors by text hash in the embedder's own LRU, so a
caller sends a page's text once per run and refers to it by hash in later rounds; a page
the cache no longer holds is named in ``missing_urls`` and the caller sends it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import grpc
from cachetools import LRUCache
from opentelemetry import trace
from quarry.v1 import ranker_pb2
from quarry_text.analyzer import Analyzer

from ranker.bounds import check_query
from ranker.errors import BoundExceededError, InvalidRequestError
from ranker.passages import (
    Embeds,
    PassageParams,
    PreparedPage,
    Ranked,
    default_per_page,
    embed_in_batches,
    prepare_candidates,
    prepare_page,
    rank_passages,
)
from ranker.rerank import Reranked, RerankParams, Scores, rerank

logger = logging.getLogger(__name__)

T = TypeVar("T")
InThread = Callable[[Callable[[], T]], Awaitable[T]]
Context = grpc.aio.ServicerContext[Any, Any]

MAX_QUERIES = 8
MAX_PAGES = 200
MAX_URL_CHARS = 8192
MAX_BUDGET_TOKENS = 200_000
MIN_PASSAGE_WORDS, MAX_PASSAGE_WORDS = 16, 2000
MAX_PER_PAGE = 100
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# The share of the caller's remaining deadline the dense pass may use for new vectors.
DEADLINE_SHARE = 0.3


def content_hash(markdown: str) -> str:
    """Hex sha256 of the UTF-8 text: a page's identity in the cache."""
    return hashlib.sha256(markdown.encode("utf-8", "surrogatepass")).hexdigest()


class PageCache:
    """Prepared pages by (url, content hash, passage size); bounded LRU (cachetools'
    ``LRUCache``), thread-safe."""

    def __init__(self, max_pages: int) -> None:
        self._pages: LRUCache[tuple[str, str, int], PreparedPage] = LRUCache(max_pages)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._pages)

    def get(self, key: tuple[str, str, int]) -> PreparedPage | None:
        with self._lock:
            return self._pages.get(key)  # a hit becomes the most recently used

    def put(self, key: tuple[str, str, int], page: PreparedPage) -> None:
        with self._lock:
            self._pages[key] = page  # the least recently used go


def _optional(request: ranker_pb2.RankPassagesRequest, name: str, default: int, hi: int) -> int:
    if not request.HasField(name):
        return default
    value = int(getattr(request, name))
    if not 1 <= value <= hi:
        raise InvalidRequestError(f"{name} must be between 1 and {hi}")
    return value


def _common(
    analyzer: Analyzer,
    request: ranker_pb2.RankPassagesRequest | ranker_pb2.PreparePassagesRequest,
) -> tuple[list[str], int]:
    """The deduplicated queries and the passage size, after checking them and the page count."""
    queries = list(dict.fromkeys(q.strip() for q in request.queries if q.strip()))
    if not queries:
        raise InvalidRequestError("queries must hold at least one non-empty query")
    if len(queries) > MAX_QUERIES:
        raise BoundExceededError(f"more than {MAX_QUERIES} queries")
    for q in queries:
        check_query(analyzer, q)
    if len(request.pages) > MAX_PAGES:
        raise BoundExceededError(f"more than {MAX_PAGES} pages")
    words = request.passage_words if request.HasField("passage_words") else 120
    if not MIN_PASSAGE_WORDS <= words <= MAX_PASSAGE_WORDS:
        raise InvalidRequestError(
            f"passage_words must be between {MIN_PASSAGE_WORDS} and {MAX_PASSAGE_WORDS}"
        )
    return queries, words


def params_from_proto(
    analyzer: Analyzer, request: ranker_pb2.RankPassagesRequest, defaults: PassageParams
) -> tuple[list[str], PassageParams]:
    """Validate the queries and knobs of a RankPassagesRequest."""
    queries, words = _common(analyzer, request)
    budget = _optional(request, "budget_tokens", 3000, MAX_BUDGET_TOKENS)
    params = PassageParams(
        budget_tokens=budget,
        passage_words=words,
        max_per_page=_optional(
            request, "max_per_page", min(default_per_page(budget), MAX_PER_PAGE), MAX_PER_PAGE
        ),
        dense=request.dense if request.HasField("dense") else True,
        dense_candidates=defaults.dense_candidates,
        dense_seconds=defaults.dense_seconds,
    )
    return queries, params


def _check_page(i: int, page: ranker_pb2.PassagePage) -> str:
    """The page's content hash, after checking its fields."""
    if not page.url.strip():
        raise InvalidRequestError(f"pages[{i}].url is empty")
    if len(page.url) > MAX_URL_CHARS:
        raise BoundExceededError(f"pages[{i}].url is longer than {MAX_URL_CHARS} characters")
    given = page.content_hash.lower()
    if given and not _SHA256.match(given):
        raise InvalidRequestError(f"pages[{i}].content_hash is not a hex sha256")
    if not page.markdown:
        if not given:
            raise InvalidRequestError(f"pages[{i}] has neither markdown nor content_hash")
        return given
    actual = content_hash(page.markdown)
    if given and given != actual:
        raise InvalidRequestError(f"pages[{i}].content_hash does not match its markdown")
    return actual


def to_proto(
    ranked: Ranked, missing: list[str], reranked: Reranked | None = None
) -> ranker_pb2.RankPassagesResponse:
    """Map the outcome to a RankPassagesResponse."""
    reply = ranker_pb2.RankPassagesResponse(
        total_passages=ranked.total, dense=ranked.dense, missing_urls=missing
    )
    if reranked is not None:
        reply.reranked, reply.rerank_note = reranked.used, reranked.note
    for c in ranked.passages:
        reply.passages.add(
            url=c.url, title=c.title, text=c.text, score=c.score, index=c.index, tokens=c.tokens
        )
    return reply


@contextlib.asynccontextmanager
async def _status_codes(context: Context, rpc: str) -> AsyncIterator[None]:
    """A bad request becomes INVALID_ARGUMENT with its reason; anything else is our bug:
    logged, and answered INTERNAL with a generic message."""
    try:
        yield
    except InvalidRequestError as err:
        logger.info("rejected %s", rpc, extra={"reason": str(err)})
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
    except Exception:
        logger.exception("%s failed", rpc)
        await context.abort(grpc.StatusCode.INTERNAL, "internal error")


class PassageRpcs:
    """RankPassages; the CPU work (splitting, BM25, embedding) runs via ``in_thread``."""

    def __init__(
        self,
        analyzer: Analyzer,
        in_thread: InThread[Any],
        *,
        cache: PageCache,
        embedder: Callable[[], Embeds | None],
        defaults: PassageParams,
        prepare_in_thread: InThread[Any] | None = None,
        prepare_candidates: int = 3,
        reranker: Callable[[], Scores | None] = lambda: None,
        rerank_params: RerankParams | None = None,
    ) -> None:
        """``prepare_in_thread`` runs PreparePassages (its own, smaller, pool of slots, so
        background work never queues a RankPassages call behind it); default ``in_thread``."""
        self._analyzer = analyzer
        self._in_thread = in_thread
        self._prepare_in_thread = prepare_in_thread or in_thread
        self._prepare_candidates = prepare_candidates
        self._cache = cache
        self._embedder = embedder
        self._defaults = defaults
        self._reranker = reranker
        self._rerank = rerank_params or RerankParams(enabled=False)

    def _run(
        self,
        request: ranker_pb2.RankPassagesRequest,
        queries: list[str],
        params: PassageParams,
        deadline: float | None,
    ) -> tuple[Ranked, list[str], Reranked | None]:
        rerank_params = self._rerank
        if deadline is not None:
            # New vectors get a share of what is left of the caller's deadline (measured
            # here, after the wait for a CPU slot), so a busy machine degrades to BM25 for
            # the passages not yet embedded instead of failing the call.
            share = max(0.0, (deadline - time.monotonic()) * DEADLINE_SHARE)
            params = dataclasses.replace(params, dense_seconds=min(params.dense_seconds, share))
            rerank_params = dataclasses.replace(
                rerank_params, seconds=min(rerank_params.seconds, share)
            )
        pages, missing = self._pages(request.pages, params.passage_words)
        outcome: list[Reranked] = []

        def reorder(
            texts: Sequence[str], fused: list[tuple[int, float]]
        ) -> list[tuple[int, float]]:
            outcome.append(rerank(self._reranker(), queries, texts, fused, rerank_params))
            return outcome[-1].fused

        ranked = rank_passages(self._analyzer, queries, pages, params, self._embedder(), reorder)
        return ranked, missing, (outcome[0] if outcome else None)

    def _pages(
        self, messages: Sequence[ranker_pb2.PassagePage], passage_words: int
    ) -> tuple[list[PreparedPage], list[str]]:
        """The pages split into passages (from the cache when seen), and the URLs of pages
        referred to by hash that the cache no longer holds."""
        pages: list[PreparedPage] = []
        missing: list[str] = []
        for i, msg in enumerate(messages):
            key = (msg.url, _check_page(i, msg), passage_words)
            page = self._cache.get(key)
            if page is None and msg.markdown:
                page = prepare_page(msg.url, msg.title, msg.markdown, passage_words)
                self._cache.put(key, page)
            if page is None:
                missing.append(msg.url)
            else:
                pages.append(page)
        return pages, missing

    async def rank(
        self, request: ranker_pb2.RankPassagesRequest, context: Context
    ) -> ranker_pb2.RankPassagesResponse:
        """Validate, then rank in a worker thread; errors become status codes."""
        async with _status_codes(context, "RankPassages"):
            queries, params = params_from_proto(self._analyzer, request, self._defaults)
            span = trace.get_current_span()
            span.set_attribute("quarry.ranker.pages", len(request.pages))
            left = context.time_remaining()
            deadline = None if left is None else time.monotonic() + left
            ranked, missing, reranked = await self._in_thread(
                lambda: self._run(request, queries, params, deadline)
            )
            span.set_attribute("quarry.ranker.passages", ranked.total)
            span.set_attribute("quarry.ranker.dense", ranked.dense)
            span.set_attribute("quarry.ranker.reranked", bool(reranked and reranked.used))
        return to_proto(ranked, missing, reranked)

    def _prepare(
        self,
        request: ranker_pb2.PreparePassagesRequest,
        queries: list[str],
        words: int,
        until: float,
        stop: threading.Event,
    ) -> ranker_pb2.PreparePassagesResponse:
        pages, missing = self._pages(request.pages, words)
        reply = ranker_pb2.PreparePassagesResponse(
            passages=sum(len(p.passages) for p in pages), missing_urls=missing
        )
        embedder = self._embedder()
        if embedder is None:
            return reply
        per_page = (
            request.candidates_per_page
            if request.HasField("candidates_per_page")
            else self._prepare_candidates
        )
        texts = [
            text
            for page in pages
            for text in prepare_candidates(self._analyzer, queries, page, min(per_page, 100))
        ]
        reply.embedded = embed_in_batches(embedder, texts, until=until, stop=stop.is_set)
        reply.dense = True
        return reply

    async def prepare(
        self, request: ranker_pb2.PreparePassagesRequest, context: Context
    ) -> ranker_pb2.PreparePassagesResponse:
        """Validate, then split and embed in a worker thread; a cancelled call (the caller
        moved on to RankPassages) stops after the batch it is embedding."""
        stop = threading.Event()
        async with _status_codes(context, "PreparePassages"):
            queries, words = _common(self._analyzer, request)
            left = context.time_remaining()
            until = time.monotonic() + (self._defaults.dense_seconds * 10 if left is None else left)
            try:
                reply: ranker_pb2.PreparePassagesResponse = await self._prepare_in_thread(
                    lambda: self._prepare(request, queries, words, until, stop)
                )
            except asyncio.CancelledError:
                stop.set()
                raise
        return reply
