"""gRPC client for the ranker's corpus RPCs (local documents) and the reader's Extract."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc, reader_pb2, reader_pb2_grpc

from orchestrator.agent.domain import CorpusError, SearchHit

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

    def to_proto(self) -> ranker_pb2.Document:
        """The wire message."""
        return ranker_pb2.Document(
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
    """The ranker's corpus RPCs; at most ``limit`` calls in flight (shared with ranking)."""

    def __init__(self, channel: grpc.aio.Channel, *, limit: asyncio.Semaphore) -> None:
        self._stub = ranker_pb2_grpc.RankerStub(channel)
        self._limit = limit

    async def list_documents(self, id_prefix: str, *, timeout: float) -> dict[str, DocInfo]:
        """The staged view of documents whose id starts with ``id_prefix``, by id."""
        request = ranker_pb2.ListDocumentsRequest(id_prefix=id_prefix)
        try:
            reply = await self._stub.ListDocuments(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "ListDocuments") from None
        return {
            d.id: DocInfo(d.id, d.content_hash, d.size, d.mtime_ns, d.chunks)
            for d in reply.documents
        }

    async def index(
        self, upsert: Sequence[LocalDoc], remove_ids: Sequence[str], *, timeout: float
    ) -> int:
        """Stage upserts and removals; returns the number of pending changes."""
        request = ranker_pb2.IndexDocumentsRequest(
            upsert=[d.to_proto() for d in upsert], remove_ids=list(remove_ids)
        )
        try:
            reply = await self._stub.IndexDocuments(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "IndexDocuments") from None
        return int(reply.pending)

    async def commit(self, *, timeout: float) -> CorpusStats:
        """Make staged changes searchable (atomically, on the ranker's side)."""
        try:
            reply = await self._stub.CommitCorpus(ranker_pb2.CommitCorpusRequest(), timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "CommitCorpus") from None
        return CorpusStats(reply.documents, reply.chunks, reply.pending, reply.committed_at)

    async def search(self, query: str, *, top_k: int, timeout: float) -> list[SearchHit]:
        """The corpus's best documents for ``query`` as search hits (engine = "local")."""
        request = ranker_pb2.SearchCorpusRequest(query=query, top_k=top_k)
        try:
            async with self._limit:
                reply = await self._stub.SearchCorpus(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise _error(err, "SearchCorpus") from None
        return [
            SearchHit(
                r.url, r.title, r.snippet, r.engine_rank, ("local",), r.published, source="local"
            )
            for r in reply.results
        ]

    async def get(self, doc_id: str, *, timeout: float) -> LocalDoc | None:
        """The indexed document ``doc_id``, or None when the corpus does not know it."""
        try:
            async with self._limit:
                d = await self._stub.GetDocument(
                    ranker_pb2.GetDocumentRequest(id=doc_id), timeout=timeout
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
