"""Doubles of the index service's RPCs and of Reader.Extract, served over the real gRPC wire.

The corpus keeps a staged view and a committed view in memory, with the contract's semantics:
ListDocuments shows staged changes, SearchCorpus and GetDocument only committed ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from quarry.v1 import index_pb2, index_pb2_grpc, reader_pb2

from services.orchestrator.tests.unit.doubles import FakeRanker, FakeReader

_WORD = re.compile(r"\w+")
_TAG = re.compile(r"<[^>]+>")
Ctx = grpc.aio.ServicerContext[Any, Any]


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


@dataclass
class CorpusState:
    """What the double holds, inspectable by tests."""

    staged: dict[str, index_pb2.Document] = field(default_factory=dict)
    committed: dict[str, index_pb2.Document] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    upserted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    commits: int = 0
    searches: list[str] = field(default_factory=list)
    # The queries of each SearchPassages call.
    passage_searches: list[list[str]] = field(default_factory=list)
    # Like the index's bound on staged text (RESOURCE_EXHAUSTED until a commit).
    max_staged_chars: int = 1 << 40

    def paragraphs(
        self, queries: Sequence[str], max_per_document: int, id_prefix: str = ""
    ) -> list[tuple[int, str, int, str, str]]:
        """SearchPassages' ranking: committed documents' paragraphs sharing words with any
        query, most first, at most ``max_per_document`` each (0: no cap), as
        (shared words, document id, position, title, text)."""
        q = set().union(*(_words(query) for query in queries))
        scored = [
            (len(q & _words(para)), d.id, i, d.title, para)
            for d in self.committed.values()
            if d.id.startswith(id_prefix)
            for i, para in enumerate(p for p in d.markdown.split("\n\n") if p.strip())
        ]
        per_doc: dict[str, int] = {}
        hits = []
        for s in sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1], s[2])):
            if max_per_document and per_doc.get(s[1], 0) >= max_per_document:
                continue
            per_doc[s[1]] = per_doc.get(s[1], 0) + 1
            hits.append(s)
        return hits


class CorpusMixin(index_pb2_grpc.IndexServicer):
    """The index's document RPCs over an in-memory ``CorpusState``."""

    corpus: CorpusState

    async def ListDocuments(
        self, request: index_pb2.ListDocumentsRequest, context: Ctx
    ) -> index_pb2.ListDocumentsResponse:
        self.corpus.calls.append("ListDocuments")
        docs = [d for i, d in self.corpus.staged.items() if i.startswith(request.id_prefix)]
        return index_pb2.ListDocumentsResponse(
            documents=[
                index_pb2.DocumentInfo(
                    id=d.id,
                    content_hash=d.content_hash,
                    size=d.size,
                    mtime_ns=d.mtime_ns,
                    title=d.title,
                    kind=d.kind,
                    chunks=1 + len(d.markdown) // 2000,
                )
                for d in docs
            ]
        )

    async def IndexDocuments(
        self, request: index_pb2.IndexDocumentsRequest, context: Ctx
    ) -> index_pb2.IndexDocumentsResponse:
        self.corpus.calls.append("IndexDocuments")
        if len(request.upsert) > 512:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "at most 512 documents")
        staged, committed = self.corpus.staged, self.corpus.committed
        waiting = sum(len(d.markdown) for i, d in staged.items() if committed.get(i) != d)
        if waiting + sum(len(d.markdown) for d in request.upsert) > self.corpus.max_staged_chars:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "staged text: commit first")
        for doc in request.upsert:
            if not doc.id.startswith("local:"):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "ids start with local:")
            self.corpus.staged[doc.id] = doc
            self.corpus.upserted.append(doc.id)
        for doc_id in request.remove_ids:
            self.corpus.staged.pop(doc_id, None)
            self.corpus.removed.append(doc_id)
        pending = sum(
            1 for i in staged.keys() | committed.keys() if staged.get(i) != committed.get(i)
        )
        return index_pb2.IndexDocumentsResponse(
            upserted=len(request.upsert), removed=len(request.remove_ids), pending=pending
        )

    async def CommitCorpus(
        self, request: index_pb2.CommitCorpusRequest, context: Ctx
    ) -> index_pb2.CorpusStats:
        self.corpus.calls.append("CommitCorpus")
        self.corpus.commits += 1
        self.corpus.committed = dict(self.corpus.staged)
        return index_pb2.CorpusStats(
            documents=len(self.corpus.committed),
            chunks=len(self.corpus.committed),
            pending=0,
            committed_at="2026-01-01T00:00:00Z",
        )

    async def SearchCorpus(
        self, request: index_pb2.SearchCorpusRequest, context: Ctx
    ) -> index_pb2.SearchCorpusResponse:
        self.corpus.searches.append(request.query)
        q = _words(request.query)
        scored = [
            (len(q & _words(d.title + " " + d.markdown)), d.id, d)
            for d in self.corpus.committed.values()
        ]
        hits = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        top = request.top_k if request.HasField("top_k") else 10
        return index_pb2.SearchCorpusResponse(
            results=[
                index_pb2.DocumentHit(
                    id=d.id, title=d.title, snippet=d.markdown[:200], rank=i, score=1.0 / i
                )
                for i, (_, _, d) in enumerate(hits[:top], start=1)
            ],
            documents=len(self.corpus.committed),
        )

    async def GetDocument(
        self, request: index_pb2.GetDocumentRequest, context: Ctx
    ) -> index_pb2.Document:
        self.corpus.calls.append("GetDocument")
        doc = self.corpus.committed.get(request.id)
        if doc is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no document {request.id!r}")
        return doc

    async def SearchPassages(
        self, request: index_pb2.SearchPassagesRequest, context: Ctx
    ) -> index_pb2.SearchPassagesResponse:
        """Paragraphs of committed documents sharing words with any query, most first."""
        self.corpus.calls.append("SearchPassages")
        self.corpus.passage_searches.append(list(request.queries))
        cap = request.max_per_document if request.HasField("max_per_document") else 3
        hits = self.corpus.paragraphs(request.queries, cap, request.id_prefix)
        top = request.top_k if request.HasField("top_k") else 8
        return index_pb2.SearchPassagesResponse(
            passages=[
                index_pb2.IndexPassage(
                    document_id=doc_id,
                    document_title=title,
                    text=text,
                    index=i,
                    score=float(n),
                    lexical_rank=rank,
                )
                for rank, (n, doc_id, i, title, text) in enumerate(hits[:top], start=1)
            ],
            retrieval="bm25",
            documents=len(self.corpus.committed),
        )


class FakeCorpusRanker(CorpusMixin, FakeRanker):
    """FakeRanker plus an in-memory index, served by the same test server."""

    def __init__(self) -> None:
        super().__init__()
        self.corpus = CorpusState()


class FakeExtractReader(FakeReader):
    """FakeReader whose Extract passes text through, strips HTML tags and refuses binaries."""

    def __init__(self, pages: dict[str, tuple[str, str]] | None = None) -> None:
        super().__init__(pages or {})
        self.extracted: list[str] = []

    async def Extract(
        self, request: reader_pb2.ExtractRequest, context: Ctx
    ) -> reader_pb2.ReadResponse:
        self.extracted.append(request.url)
        status = reader_pb2.ReadResponse
        body = request.html
        if b"\x00" in body[:1024] or request.content_type == "application/pdf":
            return status(url=request.url, status=status.UNSUPPORTED, error="binary")
        text = body.decode("utf-8", "replace")
        title = ""
        if "html" in request.content_type:
            found = re.search(r"<title>(.*?)</title>", text, re.S)
            title = found.group(1).strip() if found else ""
            text = " ".join(_TAG.sub(" ", text).split())
        return status(url=request.url, status=status.OK, title=title, markdown=text)
