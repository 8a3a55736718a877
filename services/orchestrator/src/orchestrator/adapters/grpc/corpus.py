"""gRPC client for the index service (local documents) and the reader's Extract."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry.v1 import index_pb2, index_pb2_grpc, reader_pb2, reader_pb2_grpc

from orchestrator.core.ask.domain import CorpusError, LocalPassages, Passage, SearchHit

logger = logging.getLogger(__name__)

#: Document ids are this prefix followed by the file's absolute path.
LOCAL_PREFIX = "local:"


@dataclass(frozen=True)
class DocInfo:
    """What the corpus knows about one document (no text)."""

    id: str
    content_hash: str
    size: int
    mtime_ns: int
    chunks: int = 0
    title: str = ""
    kind: str = ""
    # When this version was indexed (ISO 8601 UTC; "" if the index did not record it).
    indexed_at: str = ""
    # PDF pages its passages were cut from (0: not paged).
    pages: int = 0


@dataclass(frozen=True)
class LocalDoc:
    """A document to index, or one fetched back by id."""

    id: str
    title: str
    markdown: str
    content_hash: str
    size: int
    mtime_ns: int
    kind: str

    def to_proto(self) -> index_pb2.Document:
        """The wire message."""
        return index_pb2.Document(
            id=self.id,
            title=self.title,
            markdown=self.markdown,
            content_hash=self.content_hash,
            size=self.size,
            mtime_ns=self.mtime_ns,
            kind=self.kind,
        )


@dataclass(frozen=True)
class CorpusStats:
    """The searchable index after a commit."""

    documents: int
    chunks: int
    pending: int
    committed_at: str
    embedded: int = 0


@dataclass(frozen=True)
class Extracted:
    """Reader.Extract's answer for one file."""

    status: str
    title: str
    markdown: str
    error: str = ""


def _error(err: grpc.aio.AioRpcError, what: str) -> CorpusError:
    code = err.code()
    logger.warning("%s failed", what, extra={"grpc_code": code.name})
    return CorpusError(code.name, f"{what} failed: {code.name} {err.details() or ''}".strip())


class CorpusClient:
    """The index service's RPCs; at most ``limit`` searches and reads in flight."""

    def __init__(self, channel: grpc.aio.Channel, *, limit: asyncio.Semaphore) -> None:
        self._stub = index_pb2_grpc.IndexStub(channel)
        self._health = health_pb2_grpc.HealthStub(channel)
        self._limit = limit

    async def ping(self, *, timeout: float) -> bool:
        """True when the index's health service reports SERVING."""
        try:
            reply = await self._health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    async def list_documents(self, id_prefix: str, *, timeout: float) -> dict[str, DocInfo]:
        """The staged view of documents whose id starts with ``id_prefix``, by id."""
        request = index_pb2.ListDocumentsRequest(id_prefix=id_prefix)
        try:
            reply = await self._stub.ListDocuments(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "ListDocuments") from None
        return {
            d.id: DocInfo(
                d.id,
                d.content_hash,
                d.size,
                d.mtime_ns,
                d.chunks,
                d.title,
                d.kind,
                d.indexed_at,
                d.pages,
            )
            for d in reply.documents
        }

    async def index(
        self, upsert: Sequence[LocalDoc], remove_ids: Sequence[str], *, timeout: float
    ) -> int:
        """Stage upserts and removals; returns the number of pending changes."""
        request = index_pb2.IndexDocumentsRequest(
            upsert=[d.to_proto() for d in upsert], remove_ids=list(remove_ids)
        )
        try:
            reply = await self._stub.IndexDocuments(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "IndexDocuments") from None
        return int(reply.pending)

    async def commit(self, *, timeout: float) -> CorpusStats:
        """Make staged changes searchable (atomically, on the index's side)."""
        try:
            reply = await self._stub.CommitCorpus(index_pb2.CommitCorpusRequest(), timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "CommitCorpus") from None
        return CorpusStats(
            reply.documents, reply.chunks, reply.pending, reply.committed_at, reply.embedded
        )

    async def search(self, query: str, *, top_k: int, timeout: float) -> list[SearchHit]:
        """The corpus's best documents for ``query`` as search hits (engine = "local").

        Whole documents: the agent asks for passages (search_passages) instead.
        """
        request = index_pb2.SearchCorpusRequest(query=query, top_k=top_k)
        try:
            async with self._limit:
                reply = await self._stub.SearchCorpus(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "SearchCorpus") from None
        return [
            SearchHit(r.id, r.title, r.snippet, r.rank, ("local",), "", source="local")
            for r in reply.results
        ]

    async def search_passages(
        self,
        queries: Sequence[str],
        *,
        top_k: int,
        timeout: float,
        max_per_document: int = 3,
        id_prefix: str = "",
        id_prefixes: Sequence[str] = (),
    ) -> LocalPassages:
        """The index's best passages for ``queries`` (question, rewrite, gap queries), already
        chunked and ranked: BM25 + dense by RRF, or BM25 alone when it has no embeddings;
        only documents under ``id_prefix`` and (when given) one of ``id_prefixes``."""
        request = index_pb2.SearchPassagesRequest(
            queries=list(queries),
            top_k=top_k,
            max_per_document=max_per_document,
            id_prefix=id_prefix,
            id_prefixes=list(id_prefixes),
        )
        try:
            async with self._limit:
                reply = await self._stub.SearchPassages(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "SearchPassages") from None
        passages = [
            Passage(p.document_id, p.document_title, p.text, p.score, p.index, p.page)
            for p in reply.passages
        ]
        return LocalPassages(passages, reply.retrieval)

    async def get(self, doc_id: str, *, timeout: float) -> LocalDoc | None:
        """The indexed document ``doc_id``, or None when the corpus does not know it."""
        try:
            async with self._limit:
                d = await self._stub.GetDocument(
                    index_pb2.GetDocumentRequest(id=doc_id), timeout=timeout
                )
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise _error(err, "GetDocument") from None
        return LocalDoc(d.id, d.title, d.markdown, d.content_hash, d.size, d.mtime_ns, d.kind)


class Extractor:
    """Reader.Extract: bytes the orchestrator already has, extracted like a web page."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = reader_pb2_grpc.ReaderStub(channel)

    async def extract(
        self, body: bytes, *, url: str, content_type: str, timeout: float
    ) -> Extracted:
        """Extract ``body``; the reader never fetches anything for this call."""
        request = reader_pb2.ExtractRequest(html=body, url=url, content_type=content_type)
        try:
            reply = await self._stub.Extract(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "Extract") from None
        status = reader_pb2.ReadResponse.Status.Name(reply.status)
        return Extracted(status, reply.title, reply.markdown, reply.error)
