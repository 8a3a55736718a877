"""Index benchmark: commit time and memory with embeddings (BM25 + dense) beside BM25 alone,
measured in the same run on the real index service (``python -m index``, its own process,
through gRPC), for the project's own docs (README.md + docs/) and a 1,000-document folder.

For each corpus and mode: IndexDocuments (analysis) and CommitCorpus (merge, embedding,
persisting) wall time, the process's resident memory when SERVING (model loaded), its peak
(VmHWM) and after the commit, the size on disk, and SearchPassages latency. The 1,000
documents are notes of 60-300 words from bench/corpus (stdlib docstring paragraphs).
``--quick`` runs the project docs only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from quarry.v1 import index_pb2, index_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `bench.*` importable
    sys.path.insert(0, str(ROOT))

from index.types import Document  # noqa: E402

from bench.corpus.bench_corpus import documents  # noqa: E402 -- after sys.path
from bench.ranker.corpus import QUERIES  # noqa: E402
from bench.ranker.server import start_service  # noqa: E402

BATCH = 256
GRPC_MAX = 64 << 20
MODES = (("BM25 only", "false"), ("BM25 + dense", "true"))


def project_docs() -> list[Document]:
    """README.md and docs/*.md as the indexer would send them (markdown as is)."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    out = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        digest = f"{abs(hash(text)):016x}"
        out.append(Document(f"local:{path}", path.stem, text, digest, len(text), 0, "markdown"))
    return out


def _kib(pid: int, field: str) -> float:
    """A ``/proc/<pid>/status`` memory field, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _to_pb(d: Document) -> index_pb2.Document:
    return index_pb2.Document(
        id=d.id, title=d.title, markdown=d.markdown, content_hash=d.content_hash, kind=d.kind
    )


def _run(stub: index_pb2_grpc.IndexStub, docs: list[Document]) -> tuple[float, float, object]:
    start = time.perf_counter()
    for i in range(0, len(docs), BATCH):
        batch = [_to_pb(d) for d in docs[i : i + BATCH]]
        stub.IndexDocuments(index_pb2.IndexDocumentsRequest(upsert=batch), timeout=600)
    staged = time.perf_counter()
    stats = stub.CommitCorpus(index_pb2.CommitCorpusRequest(), timeout=3600)
    return staged - start, time.perf_counter() - staged, stats


def _search_ms(stub: index_pb2_grpc.IndexStub) -> float:
    ms = []
    for q in QUERIES:
        start = time.perf_counter()
        stub.SearchPassages(index_pb2.SearchPassagesRequest(queries=[q], top_k=8), timeout=60)
        ms.append((time.perf_counter() - start) * 1000)
    return statistics.median(ms)


def measure(docs: list[Document], dense: str) -> dict[str, float | str]:
    """One index process: index + commit ``docs``; times, memory, disk, search latency."""
    data = Path(tempfile.mkdtemp(prefix="bench-index-"))
    proc: subprocess.Popen[bytes] | None = None
    try:
        proc, port = start_service(
            "index", deadline_s=120, INDEX_DATA_DIR=str(data), INDEX_DENSE=dense
        )
        idle = _kib(proc.pid, "VmRSS")
        opts = [("grpc.max_send_message_length", GRPC_MAX)]
        with grpc.insecure_channel(f"127.0.0.1:{port}", options=opts) as ch:
            stub = index_pb2_grpc.IndexStub(ch)
            analyse_s, commit_s, stats = _run(stub, docs)
            search = _search_ms(stub)
            retrieval = stub.SearchPassages(
                index_pb2.SearchPassagesRequest(queries=[QUERIES[0]]), timeout=60
            ).retrieval
        disk = sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) / 1e6
        return {
            "analyse_s": analyse_s,
            "commit_s": commit_s,
            "passages": float(stats.chunks),  # type: ignore[attr-defined]
            "embedded": float(stats.embedded),  # type: ignore[attr-defined]
            "idle_mb": idle,
            "peak_mb": _kib(proc.pid, "VmHWM"),
            "after_mb": _kib(proc.pid, "VmRSS"),
            "disk_mb": disk,
            "search_ms": search,
            "retrieval": retrieval,
        }
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(30)
        shutil.rmtree(data, ignore_errors=True)


def report(name: str, docs: list[Document]) -> None:
    """Both modes over ``docs``, one table."""
    words = sum(len(d.markdown.split()) for d in docs)
    print(f"\n{name}: {len(docs)} documents, {words:,} words")
    head = ("mode", "IndexDocs s", "Commit s", "passages", "embedded", "RSS idle/peak/after MB")
    print(f"  {head[0]:<14}{head[1]:>12}{head[2]:>10}{head[3]:>10}{head[4]:>10}  {head[5]}")
    for label, dense in MODES:
        r = measure(docs, dense)
        mem = f"{r['idle_mb']:.0f} / {r['peak_mb']:.0f} / {r['after_mb']:.0f}"
        print(
            f"  {label:<14}{r['analyse_s']:>12.2f}{r['commit_s']:>10.2f}"
            f"{r['passages']:>10.0f}{r['embedded']:>10.0f}  {mem}"
            f"   disk {r['disk_mb']:.1f} MB, SearchPassages median {r['search_ms']:.1f} ms"
            f" ({r['retrieval']})"
        )


def main() -> None:
    """Project docs, then (unless --quick) the 1,000-document folder."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the project docs only")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    report("project docs (README.md + docs/)", project_docs())
    if not args.quick:
        report("1,000-document folder", documents(1000, seed=5, words=(60, 300)))


if __name__ == "__main__":
    main()
