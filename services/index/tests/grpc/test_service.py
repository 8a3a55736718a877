"""The corpus RPCs over a real grpc.aio server on 127.0.0.1 (port 0) with a data dir."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeAlias

import grpc
import pytest
from index.config import Settings
from index.corpus import Corpus
from index.server import build_server
from index.types import Document
from quarry.v1 import index_pb2, index_pb2_grpc
from quarry_text.analyzer import Analyzer

from services.index.tests.generated import corpus, document, marker

pb = index_pb2
Stub: TypeAlias = "index_pb2_grpc.IndexAsyncStub"  # the async stub exists in the .pyi only


@asynccontextmanager
async def _server(data: Path, corpus_: Corpus | None = None) -> AsyncIterator[Stub]:
    server = build_server(Settings(port=0, data_dir=data), corpus_)
    port = await server.start()
    try:
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{port}",
            options=[
                ("grpc.max_send_message_length", 64 << 20),
                ("grpc.max_receive_message_length", 64 << 20),
            ],
        ) as ch:
            yield index_pb2_grpc.IndexStub(ch)
    finally:
        await server.stop(0)


@pytest.fixture
async def stub(tmp_path: Path) -> AsyncIterator[Stub]:
    async with _server(tmp_path) as s:
        yield s


def _pb(d: Document) -> pb.Document:
    return pb.Document(
        id=d.id,
        title=d.title,
        markdown=d.markdown,
        content_hash=d.content_hash,
        size=d.size,
        mtime_ns=d.mtime_ns,
        kind=d.kind,
    )


async def _index(stub: Stub, docs: list[Document], remove: list[str] | None = None) -> None:
    for i in range(0, max(len(docs), 1), 200):
        batch = [_pb(d) for d in docs[i : i + 200]]
        await stub.IndexDocuments(pb.IndexDocumentsRequest(upsert=batch, remove_ids=remove or []))
        remove = None


async def _search(stub: Stub, query: str, top_k: int = 10) -> list[str]:
    reply = await stub.SearchCorpus(pb.SearchCorpusRequest(query=query, top_k=top_k), timeout=10)
    return [r.id for r in reply.results]


async def _code(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    return info.value.code(), str(info.value.details())


async def test_index_commit_search_get(stub: Stub) -> None:
    docs = corpus(300)
    assert (await stub.SearchCorpus(pb.SearchCorpusRequest(query="python"))).documents == 0
    await _index(stub, docs)
    listed = await stub.ListDocuments(pb.ListDocumentsRequest())
    assert len(listed.documents) == 300
    assert await _search(stub, marker(42)) == []  # staged, not committed
    stats = await stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60)
    assert (stats.documents, stats.pending) == (300, 0)
    assert stats.chunks == sum(d.chunks for d in listed.documents)
    reply = await stub.SearchCorpus(pb.SearchCorpusRequest(query=f"{marker(42)} notes"))
    assert reply.documents == 300
    assert len(reply.results) == 10  # default top_k
    top = reply.results[0]
    assert top.id == docs[42].id
    assert (top.title, top.rank) == (docs[42].title, 1)
    assert top.score > 0
    assert marker(42) in top.snippet
    assert [r.rank for r in reply.results] == list(range(1, 11))
    got = await stub.GetDocument(pb.GetDocumentRequest(id=docs[42].id))
    assert got == _pb(docs[42])
    info = {d.id: d for d in listed.documents}[docs[42].id]
    assert (info.content_hash, info.kind, info.size) == (
        docs[42].content_hash,
        docs[42].kind,
        docs[42].size,
    )


async def test_incremental_refresh_and_prefix_listing(stub: Stub) -> None:
    docs = corpus(200)
    await _index(stub, docs)
    await stub.CommitCorpus(pb.CommitCorpusRequest())
    changed = [document(1, version=1), document(210)]
    reply = await stub.IndexDocuments(
        pb.IndexDocumentsRequest(
            upsert=[_pb(d) for d in changed], remove_ids=[docs[2].id, "local:/never/seen"]
        )
    )
    assert (reply.upserted, reply.removed, reply.pending) == (2, 1, 3)
    stats = await stub.CommitCorpus(pb.CommitCorpusRequest())
    assert (stats.documents, stats.pending) == (200, 0)
    assert await _search(stub, marker(2)) == []
    assert await _search(stub, marker(210)) == [document(210).id]
    got = await stub.GetDocument(pb.GetDocumentRequest(id=docs[1].id))
    assert got.content_hash == changed[0].content_hash
    prefix = "local:/corpus/garden/"
    listed = await stub.ListDocuments(pb.ListDocumentsRequest(id_prefix=prefix))
    ids = [d.id for d in listed.documents]
    assert ids == sorted(d.id for d in [*docs, changed[1]] if d.id.startswith(prefix))


async def test_a_restarted_server_serves_the_committed_index(tmp_path: Path) -> None:
    docs = corpus(150)
    async with _server(tmp_path) as stub:
        await _index(stub, docs)
        committed = await stub.CommitCorpus(pb.CommitCorpusRequest())
        answers = [await _search(stub, q) for q in ("python wheel", marker(9), "東京")]
        await _index(stub, [document(3, version=1)])  # staged only, then the server stops
    async with _server(tmp_path) as stub:
        stats = await stub.CommitCorpus(pb.CommitCorpusRequest())  # nothing staged
        assert stats == committed
        assert [await _search(stub, q) for q in ("python wheel", marker(9), "東京")] == answers
        got = await stub.GetDocument(pb.GetDocumentRequest(id=docs[3].id))
        assert got.content_hash == docs[3].content_hash


async def test_queries_are_served_during_a_slow_commit(tmp_path: Path) -> None:
    entered, release = threading.Event(), threading.Event()

    def pause() -> None:
        entered.set()
        assert release.wait(30)

    slow = Corpus(Analyzer(), tmp_path, before_swap=pause)
    async with _server(tmp_path, slow) as stub:
        release.set()  # the first commit goes straight through
        await _index(stub, corpus(100))
        await stub.CommitCorpus(pb.CommitCorpusRequest())
        release.clear()
        await _index(stub, [document(i, version=1) for i in range(100, 400)])
        commit = asyncio.ensure_future(stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60))
        assert await asyncio.to_thread(entered.wait, 30)
        for _ in range(5):  # the commit is built and waiting: queries use the old index
            assert await _search(stub, marker(7)) == [document(7).id]
            assert await _search(stub, marker(150)) == []
            listed = await stub.ListDocuments(pb.ListDocumentsRequest())
            assert len(listed.documents) == 400
        second = asyncio.ensure_future(stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60))
        release.set()
        stats = await commit
        assert (stats.documents, stats.pending) == (400, 0)
        assert (await second).documents == 400  # serialised behind the first
        assert await _search(stub, marker(150)) == [document(150, version=1).id]


async def test_not_found(stub: Stub) -> None:
    code, details = await _code(stub.GetDocument(pb.GetDocumentRequest(id="local:/nope.md")))
    assert code == grpc.StatusCode.NOT_FOUND
    assert "local:/nope.md" in details


def _doc(**fields: object) -> pb.Document:
    base = {"id": "local:/a.md", "markdown": "text", "content_hash": "ab12", "kind": "markdown"}
    return pb.Document(**(base | fields))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (pb.IndexDocumentsRequest(upsert=[_doc(id="/a.md")]), "upsert[0].id must start with"),
        (pb.IndexDocumentsRequest(upsert=[_doc(id="local:")]), "upsert[0].id must start with"),
        (pb.IndexDocumentsRequest(upsert=[_doc(id="local:/" + "a" * 4096)]), "4096 characters"),
        (pb.IndexDocumentsRequest(upsert=[_doc(content_hash="xyz")]), "hex digits"),
        (pb.IndexDocumentsRequest(upsert=[_doc(content_hash="")]), "hex digits"),
        (pb.IndexDocumentsRequest(upsert=[_doc(kind="docx")]), "kind must be one of"),
        (pb.IndexDocumentsRequest(upsert=[_doc(title="t" * 2001)]), "2000 characters"),
        (pb.IndexDocumentsRequest(upsert=[_doc(markdown="m" * (8 << 20 | 1))]), "8388608"),
        (pb.IndexDocumentsRequest(upsert=[_doc(), _doc()]), "upsert[1].id appears twice"),
        (pb.IndexDocumentsRequest(upsert=[_doc(id=f"local:/{i}") for i in range(513)]), "512"),
        (pb.IndexDocumentsRequest(remove_ids=["file:/x"]), "remove_ids[0] must start with"),
        (pb.IndexDocumentsRequest(remove_ids=["local:/x"] * 10_001), "10000 remove_ids"),
    ],
)
async def test_index_bounds(stub: Stub, request_: pb.IndexDocumentsRequest, expected: str) -> None:
    code, details = await _code(stub.IndexDocuments(request_, timeout=30))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert expected in details
    assert (await stub.ListDocuments(pb.ListDocumentsRequest())).documents == []


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda s: s.SearchCorpus(pb.SearchCorpusRequest(query="x", top_k=0)), "top_k"),
        (lambda s: s.SearchCorpus(pb.SearchCorpusRequest(query="x", top_k=101)), "100"),
        (lambda s: s.SearchCorpus(pb.SearchCorpusRequest(query="x" * 4097)), "4096 characters"),
        (lambda s: s.SearchCorpus(pb.SearchCorpusRequest(query="a " * 129)), "128 tokens"),
        (lambda s: s.GetDocument(pb.GetDocumentRequest(id="")), "id must start with"),
        (lambda s: s.ListDocuments(pb.ListDocumentsRequest(id_prefix="l" * 4097)), "4096"),
        (lambda s: s.SearchPassages(pb.SearchPassagesRequest()), "at least one non-empty"),
        (lambda s: s.SearchPassages(pb.SearchPassagesRequest(queries=[" "])), "non-empty"),
        (lambda s: s.SearchPassages(pb.SearchPassagesRequest(queries=["x"] * 9)), "8 queries"),
        (
            lambda s: s.SearchPassages(pb.SearchPassagesRequest(queries=["x", "a " * 129])),
            "queries[1] has more than 128 tokens",
        ),
        (lambda s: s.SearchPassages(pb.SearchPassagesRequest(queries=["x"], top_k=0)), "top_k"),
        (lambda s: s.SearchPassages(pb.SearchPassagesRequest(queries=["x"], rrf_k=0)), "rrf_k"),
        (
            lambda s: s.SearchPassages(
                pb.SearchPassagesRequest(queries=["x"], id_prefix="l" * 4097)
            ),
            "id_prefix",
        ),
    ],
)
async def test_query_bounds(stub: Stub, call: object, expected: str) -> None:
    code, details = await _code(call(stub))  # type: ignore[operator]
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert expected in details


async def test_empty_corpus_and_empty_queries(stub: Stub) -> None:
    assert await _search(stub, "anything") == []
    stats = await stub.CommitCorpus(pb.CommitCorpusRequest())
    assert (stats.documents, stats.committed_at) == (0, "")
    await _index(stub, corpus(20))
    await stub.CommitCorpus(pb.CommitCorpusRequest())
    assert await _search(stub, "") == []
    assert await _search(stub, "the of and") == []


async def test_a_large_batch_fits_the_message_limit(stub: Stub) -> None:
    big = "lorem ipsum dolor sit amet " * 200_000  # ~5.4 MB
    docs = [Document(f"local:/big/{i}.txt", "", big + marker(i), "ab") for i in range(8)]
    await _index(stub, docs)
    stats = await stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60)
    assert stats.documents == 8
    assert await _search(stub, marker(5)) == ["local:/big/5.txt"]
    got = await stub.GetDocument(pb.GetDocumentRequest(id="local:/big/5.txt"))
    assert len(got.markdown) == len(docs[5].markdown)


async def test_too_much_staged_text_asks_for_a_commit(tmp_path: Path) -> None:
    small = Corpus(Analyzer(), tmp_path, max_staged_bytes=50_000)
    async with _server(tmp_path, small) as stub:
        docs = [Document(f"local:/s/{i}", "", "text " * 4000, "ab") for i in range(4)]
        await _index(stub, docs[:2])
        code, details = await _code(
            stub.IndexDocuments(pb.IndexDocumentsRequest(upsert=[_pb(d) for d in docs[2:]]))
        )
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "call CommitCorpus" in details
        await stub.CommitCorpus(pb.CommitCorpusRequest())
        await _index(stub, docs[2:])
        assert (await stub.CommitCorpus(pb.CommitCorpusRequest())).documents == 4


async def test_search_passages_over_grpc_without_embeddings(stub: Stub) -> None:
    docs = corpus(60)
    await _index(stub, docs)
    await stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60)
    reply = await stub.SearchPassages(
        pb.SearchPassagesRequest(queries=[marker(7), "unrelated words"], top_k=3), timeout=10
    )
    assert (reply.retrieval, reply.documents) == ("bm25", 60)
    top = reply.passages[0]
    assert (top.document_id, top.document_title, top.lexical_rank) == (docs[7].id, docs[7].title, 1)
    assert marker(7) in top.text
    assert top.dense_rank == 0
    assert top.score == pytest.approx(1 / 61)
