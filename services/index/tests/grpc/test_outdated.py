"""An index built with other text settings, over a real grpc.aio server on 127.0.0.1: every
search answers FAILED_PRECONDITION naming `quarry index` until the documents are re-added."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeAlias

import grpc
import pytest
from index.config import Settings
from index.server import build_server
from quarry.v1 import index_pb2, index_pb2_grpc

from services.index.tests.generated import corpus, marker

pb = index_pb2
Stub: TypeAlias = "index_pb2_grpc.IndexAsyncStub"  # the async stub exists in the .pyi only


@asynccontextmanager
async def _server(data: Path, *, stem: bool) -> AsyncIterator[Stub]:
    server = build_server(Settings(port=0, data_dir=data, stem=stem, dense=False))
    port = await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield index_pb2_grpc.IndexStub(channel)
    finally:
        await server.stop(0)


async def _add(stub: Stub, n: int) -> None:
    docs = [
        pb.Document(
            id=d.id, title=d.title, markdown=d.markdown, content_hash=d.content_hash, kind=d.kind
        )
        for d in corpus(n)
    ]
    await stub.IndexDocuments(pb.IndexDocumentsRequest(upsert=docs), timeout=30)
    await stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60)


async def _refused(call: object) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call  # type: ignore[misc]
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    return str(info.value.details())


async def test_a_mismatched_index_is_refused_until_rebuilt(tmp_path: Path) -> None:
    async with _server(tmp_path, stem=True) as stub:
        await _add(stub, 12)
    # INDEX_STEM=false now: the stored terms are stems, the queries would not be.
    async with _server(tmp_path, stem=False) as stub:
        query = pb.SearchCorpusRequest(query=marker(3))
        details = await _refused(stub.SearchCorpus(query, timeout=10))
        assert "stemmer english (now none, INDEX_STEM)" in details
        assert "rebuild it with `quarry index`" in details
        passages = pb.SearchPassagesRequest(queries=[marker(3)])
        assert await _refused(stub.SearchPassages(passages, timeout=10)) == details
        get = pb.GetDocumentRequest(id=corpus(1)[0].id)
        assert await _refused(stub.GetDocument(get, timeout=10)) == details
        listing = await stub.ListDocuments(pb.ListDocumentsRequest(), timeout=10)
        assert list(listing.documents) == []  # so `quarry index` re-adds every document
        await _add(stub, 12)
        reply = await stub.SearchCorpus(query, timeout=10)
        assert [r.id for r in reply.results] == [corpus(4)[3].id]
    # The rebuilt index is today's: a restart with the same settings uses it.
    async with _server(tmp_path, stem=False) as stub:
        reply = await stub.SearchCorpus(query, timeout=10)
        assert reply.documents == 12
