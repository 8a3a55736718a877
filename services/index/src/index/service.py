"""IndexServicer: validates and maps proto to the corpus domain, errors to status codes."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from opentelemetry import trace
from quarry.v1 import index_pb2, index_pb2_grpc
from quarry_common.threads import in_thread
from quarry_text.analyzer import Analyzer, AnalyzerConfig

from index.config import Settings
from index.corpus import DEFAULT_TOP_K, Corpus
from index.dense import Embedder
from index.errors import (
    BoundExceededError,
    CorpusStorageError,
    IndexOutdatedError,
    InvalidRequestError,
    NotFoundError,
    StagingFullError,
)
from index.passages import PassageParams
from index.types import KINDS, CorpusStats, Document, DocumentInfo, Hit, PassageHit

logger = logging.getLogger(__name__)

ID_PREFIX = "local:"
MAX_ID_CHARS = 4096
MAX_UPSERTS = 512
# Removals carry no text: a deleted folder of thousands of files fits in a few calls.
MAX_REMOVALS = 10_000
# 8 Mi characters of extracted text (several thousand pages of a book); the gRPC message
# limit (64 MiB) bounds a batch as a whole.
MAX_MARKDOWN_CHARS = 8 * 1024 * 1024
MAX_TITLE_CHARS = 2000
MAX_HASH_CHARS = 128
MAX_TOP_K = 100
MAX_QUERIES = 8
MAX_QUERY_TOKENS = 128
# 128 tokens of ordinary words fit in well under 4 KiB; far longer is not a query.
MAX_QUERY_CHARS = 4096
MAX_RRF_K = 10_000
MAX_ID_PREFIXES = 64
_HEX = re.compile(r"[0-9a-fA-F]+")

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]


def check_query(analyzer: Analyzer, query: str, field: str = "query") -> None:
    """Raise BoundExceededError when ``query`` is beyond the query bounds."""
    if len(query) > MAX_QUERY_CHARS:
        raise BoundExceededError(f"{field} is longer than {MAX_QUERY_CHARS} characters")
    if len(analyzer.surface_tokens(query)) > MAX_QUERY_TOKENS:
        raise BoundExceededError(f"{field} has more than {MAX_QUERY_TOKENS} tokens")


def check_id(field: str, doc_id: str) -> None:
    """Raise InvalidRequestError unless ``doc_id`` is a corpus id."""
    if not doc_id.startswith(ID_PREFIX) or len(doc_id) == len(ID_PREFIX):
        raise InvalidRequestError(f"{field} must start with {ID_PREFIX!r} and name a path")
    if len(doc_id) > MAX_ID_CHARS:
        raise BoundExceededError(f"{field} is longer than {MAX_ID_CHARS} characters")


def document_from_proto(i: int, d: index_pb2.Document) -> Document:
    """Validate ``upsert[i]`` and map it to the domain."""
    check_id(f"upsert[{i}].id", d.id)
    if len(d.markdown) > MAX_MARKDOWN_CHARS:
        raise BoundExceededError(
            f"upsert[{i}].markdown is longer than {MAX_MARKDOWN_CHARS} characters"
        )
    if len(d.title) > MAX_TITLE_CHARS:
        raise BoundExceededError(f"upsert[{i}].title is longer than {MAX_TITLE_CHARS} characters")
    if not _HEX.fullmatch(d.content_hash) or len(d.content_hash) > MAX_HASH_CHARS:
        raise InvalidRequestError(
            f"upsert[{i}].content_hash must be 1 to {MAX_HASH_CHARS} hex digits"
        )
    if d.kind not in KINDS:
        raise InvalidRequestError(f"upsert[{i}].kind must be one of {', '.join(sorted(KINDS))}")
    return Document(d.id, d.title, d.markdown, d.content_hash, d.size, d.mtime_ns, d.kind)


def index_request_from_proto(
    request: index_pb2.IndexDocumentsRequest,
) -> tuple[list[Document], list[str]]:
    """Validate an IndexDocumentsRequest: upserts (ids distinct) and removal ids."""
    if len(request.upsert) > MAX_UPSERTS:
        raise BoundExceededError(f"more than {MAX_UPSERTS} documents in upsert")
    if len(request.remove_ids) > MAX_REMOVALS:
        raise BoundExceededError(f"more than {MAX_REMOVALS} remove_ids")
    docs = [document_from_proto(i, d) for i, d in enumerate(request.upsert)]
    seen: set[str] = set()
    for i, d in enumerate(docs):
        if d.id in seen:
            raise InvalidRequestError(f"upsert[{i}].id appears twice in upsert")
        seen.add(d.id)
    for i, doc_id in enumerate(request.remove_ids):
        check_id(f"remove_ids[{i}]", doc_id)
    return docs, list(request.remove_ids)


def info_to_proto(info: DocumentInfo) -> index_pb2.DocumentInfo:
    """Map a listing entry."""
    return index_pb2.DocumentInfo(
        id=info.id,
        content_hash=info.content_hash,
        size=info.size,
        mtime_ns=info.mtime_ns,
        title=info.title,
        kind=info.kind,
        chunks=info.chunks,
        indexed_at=info.indexed_at,
        pages=len(info.page_starts),
    )


def stats_to_proto(stats: CorpusStats) -> index_pb2.CorpusStats:
    """Map corpus sizes."""
    return index_pb2.CorpusStats(
        documents=stats.documents,
        chunks=stats.chunks,
        pending=stats.pending,
        committed_at=stats.committed_at,
        embedded=stats.embedded,
        embedding_model=stats.embedding_model,
    )


def hits_to_proto(hits: list[Hit], documents: int) -> index_pb2.SearchCorpusResponse:
    """Map document hits."""
    reply = index_pb2.SearchCorpusResponse(documents=documents)
    for h in hits:
        reply.results.add(id=h.id, title=h.title, snippet=h.snippet, rank=h.rank, score=h.score)
    return reply


def passages_request_from_proto(
    analyzer: Analyzer, request: index_pb2.SearchPassagesRequest
) -> tuple[list[str], PassageParams]:
    """Validate a SearchPassagesRequest: 1 to MAX_QUERIES bounded queries, sane knobs."""
    queries = [q for q in request.queries if q.strip()]
    if not queries:
        raise InvalidRequestError("queries must hold at least one non-empty query")
    if len(request.queries) > MAX_QUERIES:
        raise BoundExceededError(f"more than {MAX_QUERIES} queries")
    for i, q in enumerate(request.queries):
        check_query(analyzer, q, f"queries[{i}]")
    top_k = request.top_k if request.HasField("top_k") else 8
    if not 1 <= top_k <= MAX_TOP_K:
        raise BoundExceededError(f"top_k must be between 1 and {MAX_TOP_K}")
    per_doc = request.max_per_document if request.HasField("max_per_document") else 3
    rrf_k = request.rrf_k if request.HasField("rrf_k") else 60
    if not 1 <= rrf_k <= MAX_RRF_K:
        raise BoundExceededError(f"rrf_k must be between 1 and {MAX_RRF_K}")
    if len(request.id_prefix) > MAX_ID_CHARS:
        raise BoundExceededError(f"id_prefix is longer than {MAX_ID_CHARS} characters")
    if len(request.id_prefixes) > MAX_ID_PREFIXES:
        raise BoundExceededError(f"more than {MAX_ID_PREFIXES} id_prefixes")
    for i, prefix in enumerate(request.id_prefixes):
        if not prefix or len(prefix) > MAX_ID_CHARS:
            raise BoundExceededError(f"id_prefixes[{i}] must be 1 to {MAX_ID_CHARS} characters")
    params = PassageParams(
        top_k, per_doc, request.id_prefix, rrf_k, id_prefixes=tuple(request.id_prefixes)
    )
    return queries, params


def passages_to_proto(
    hits: list[PassageHit], retrieval: str, documents: int
) -> index_pb2.SearchPassagesResponse:
    """Map passage hits."""
    reply = index_pb2.SearchPassagesResponse(retrieval=retrieval, documents=documents)
    for h in hits:
        reply.passages.add(
            document_id=h.document_id,
            document_title=h.document_title,
            text=h.text,
            index=h.index,
            score=h.score,
            lexical_rank=h.lexical_rank,
            dense_rank=h.dense_rank,
            page=h.page,
        )
    return reply


def document_to_proto(d: Document) -> index_pb2.Document:
    """Map a document."""
    return index_pb2.Document(
        id=d.id,
        title=d.title,
        markdown=d.markdown,
        content_hash=d.content_hash,
        size=d.size,
        mtime_ns=d.mtime_ns,
        kind=d.kind,
    )


class IndexServicer(index_pb2_grpc.IndexServicer):
    """The index's RPCs. Analysis and commits take a CPU slot (``_in_thread``); searches run
    in a plain worker thread, so a long commit holding the slots never holds queries back."""

    def __init__(
        self, settings: Settings, corpus: Corpus | None = None, embedder: Embedder | None = None
    ) -> None:
        """``corpus`` defaults to one over ``settings.data_dir`` with ``embedder``."""
        self._analyzer = Analyzer(AnalyzerConfig(stem=settings.stem, stopwords=settings.stopwords))
        self._cpu = asyncio.Semaphore(settings.cpu_concurrency)
        self.corpus = corpus or Corpus(
            self._analyzer,
            settings.data_dir,
            chunk_words=settings.passage_words,
            embedder=embedder,
        )
        # Created lazily: an asyncio.Lock binds to the loop it is first used in.
        self._commit_lock: asyncio.Lock | None = None
        self._backfill: asyncio.Task[CorpusStats] | None = None

    async def warm_up(self) -> None:
        """Load the persisted index before reporting SERVING; when its passages lack this
        model's vectors (a model new since, or a stop mid-embedding), embed them in the
        background: searches meanwhile use BM25 for them."""
        await asyncio.to_thread(self.corpus.load)
        if self.corpus.needs_vectors():
            self._backfill = asyncio.create_task(self._commit())

    async def _commit(self) -> CorpusStats:
        """One commit at a time, waiting for its turn without holding a CPU slot."""
        if self._commit_lock is None:
            self._commit_lock = asyncio.Lock()
        async with self._commit_lock:
            return await self._in_thread(self.corpus.commit)

    async def _in_thread(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a worker thread, at most ``cpu_concurrency`` at once."""
        return await in_thread(self._cpu, fn)

    async def _guard(self, rpc: str, context: Context, call: Callable[[], Awaitable[T]]) -> T:
        """Run ``call``; map domain errors to status codes, anything else to INTERNAL."""
        try:
            return await call()
        except InvalidRequestError as err:
            logger.info(f"rejected {rpc}", extra={"reason": str(err)})
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        except NotFoundError as err:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(err))
        except IndexOutdatedError as err:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(err))
        except StagingFullError as err:
            logger.info(f"rejected {rpc}", extra={"reason": str(err)})
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(err))
        except CorpusStorageError as err:
            await context.abort(grpc.StatusCode.INTERNAL, str(err))
        except Exception:  # anything else is our bug: log it, answer generically
            logger.exception(f"{rpc} failed")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error")

    async def ListDocuments(
        self, request: index_pb2.ListDocumentsRequest, context: Context
    ) -> index_pb2.ListDocumentsResponse:
        async def run() -> index_pb2.ListDocumentsResponse:
            if len(request.id_prefix) > MAX_ID_CHARS:
                raise BoundExceededError(f"id_prefix is longer than {MAX_ID_CHARS} characters")
            infos = self.corpus.documents(request.id_prefix)
            return index_pb2.ListDocumentsResponse(documents=[info_to_proto(i) for i in infos])

        return await self._guard("ListDocuments", context, run)

    async def IndexDocuments(
        self, request: index_pb2.IndexDocumentsRequest, context: Context
    ) -> index_pb2.IndexDocumentsResponse:
        async def run() -> index_pb2.IndexDocumentsResponse:
            docs, remove_ids = index_request_from_proto(request)
            trace.get_current_span().set_attribute("quarry.index.documents", len(docs))
            prepared = await self._in_thread(lambda: self.corpus.prepare(docs))
            upserted, removed, pending = self.corpus.stage(prepared, remove_ids)
            return index_pb2.IndexDocumentsResponse(
                upserted=upserted, removed=removed, pending=pending
            )

        return await self._guard("IndexDocuments", context, run)

    async def CommitCorpus(
        self, request: index_pb2.CommitCorpusRequest, context: Context
    ) -> index_pb2.CorpusStats:
        async def run() -> index_pb2.CorpusStats:
            return stats_to_proto(await self._commit())

        return await self._guard("CommitCorpus", context, run)

    async def SearchCorpus(
        self, request: index_pb2.SearchCorpusRequest, context: Context
    ) -> index_pb2.SearchCorpusResponse:
        async def run() -> index_pb2.SearchCorpusResponse:
            check_query(self._analyzer, request.query)
            top_k = request.top_k if request.HasField("top_k") else DEFAULT_TOP_K
            if not 1 <= top_k <= MAX_TOP_K:
                raise BoundExceededError(f"top_k must be between 1 and {MAX_TOP_K}")
            hits, documents = await asyncio.to_thread(self.corpus.search, request.query, top_k)
            return hits_to_proto(hits, documents)

        return await self._guard("SearchCorpus", context, run)

    async def GetDocument(
        self, request: index_pb2.GetDocumentRequest, context: Context
    ) -> index_pb2.Document:
        async def run() -> index_pb2.Document:
            check_id("id", request.id)
            return document_to_proto(self.corpus.get(request.id))

        return await self._guard("GetDocument", context, run)

    async def SearchPassages(
        self, request: index_pb2.SearchPassagesRequest, context: Context
    ) -> index_pb2.SearchPassagesResponse:
        """Passages for the queries, BM25 + dense fused by RRF (BM25 alone without vectors)."""

        async def run() -> index_pb2.SearchPassagesResponse:
            queries, params = passages_request_from_proto(self._analyzer, request)
            hits, retrieval, documents = await asyncio.to_thread(
                self.corpus.passages, queries, params
            )
            span = trace.get_current_span()
            span.set_attribute("quarry.index.passages", len(hits))
            span.set_attribute("quarry.index.retrieval", retrieval)
            return passages_to_proto(hits, retrieval, documents)

        return await self._guard("SearchPassages", context, run)
