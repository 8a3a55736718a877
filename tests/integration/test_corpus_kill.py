"""An index killed (SIGKILL) in the middle of CommitCorpus restarts with a complete index:
the previous commit, or the new one if the kill came after its commit point, never a mix."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import grpc
from quarry.v1 import index_pb2, index_pb2_grpc

from services.index.tests.generated import document, marker
from tests.conftest import free_port, service_env, start_service, wait_serving

pb = index_pb2
OLD, NEW = 100, 1500


def _start(data: Path, spawn: list[subprocess.Popen[bytes]]) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    # BM25 only: this is about atomic commits, and 1,500 documents would take a while to embed.
    env = service_env(
        INDEX_PORT=str(port),
        INDEX_DATA_DIR=str(data),
        INDEX_LOG_LEVEL="WARNING",
        INDEX_DENSE="false",
    )
    proc = start_service("index", env)
    spawn.append(proc)
    wait_serving(port, proc)
    return proc, port


def _index(stub: index_pb2_grpc.IndexStub, docs: list[pb.Document]) -> None:
    for i in range(0, len(docs), 250):
        stub.IndexDocuments(pb.IndexDocumentsRequest(upsert=docs[i : i + 250]), timeout=60)


def _pb(i: int, version: int) -> pb.Document:
    d = document(i, version)
    return pb.Document(
        id=d.id, title=d.title, markdown=d.markdown, content_hash=d.content_hash, kind=d.kind
    )


def _kill_while_writing(
    proc: subprocess.Popen[bytes], data: Path, commit: grpc.Future[pb.CorpusStats]
) -> None:
    """SIGKILL as soon as the new generation appears on disk (or the commit is done)."""
    deadline = time.monotonic() + 60
    while not commit.done() and time.monotonic() < deadline:
        if any(p.name.startswith("gen-00000002") for p in (data / "corpus").iterdir()):
            break
        time.sleep(0.001)
    proc.kill()
    proc.wait(10)


def test_an_index_killed_mid_commit_restarts_with_a_complete_index(
    tmp_path: Path, spawn: list[subprocess.Popen[bytes]]
) -> None:
    proc, port = _start(tmp_path, spawn)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = index_pb2_grpc.IndexStub(ch)
        _index(stub, [_pb(i, 0) for i in range(OLD)])
        assert stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60).documents == OLD
        _index(stub, [_pb(i, 1) for i in range(NEW)])
        commit = stub.CommitCorpus.future(pb.CommitCorpusRequest(), timeout=60)
        _kill_while_writing(proc, tmp_path, commit)
    proc, port = _start(tmp_path, spawn)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = index_pb2_grpc.IndexStub(ch)
        stats = stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60)  # nothing staged
        assert stats.documents in (OLD, NEW)
        version = 0 if stats.documents == OLD else 1
        listed = stub.ListDocuments(pb.ListDocumentsRequest(), timeout=10).documents
        assert {d.content_hash for d in listed} == {
            document(i, version).content_hash for i in range(stats.documents)
        }
        got = stub.GetDocument(pb.GetDocumentRequest(id=document(42).id), timeout=10)
        assert got.markdown == document(42, version).markdown
        reply = stub.SearchCorpus(pb.SearchCorpusRequest(query=f"{marker(42)} v{version}"))
        assert reply.results[0].id == document(42).id
        # Whatever it found, it keeps working: the next commit applies (and cleans up).
        _index(stub, [_pb(7, 2)])
        assert stub.CommitCorpus(pb.CommitCorpusRequest(), timeout=60).pending == 0
        got = stub.GetDocument(pb.GetDocumentRequest(id=document(7).id), timeout=10)
        assert got.markdown == document(7, 2).markdown
    assert sorted(p.name for p in (tmp_path / "corpus").iterdir()) == ["CURRENT", "gen-00000003"]
