"""Corpus benchmark (local documents): indexing throughput of IndexDocuments + CommitCorpus
and SearchCorpus latency at 1k and 10k documents, in-process and through gRPC, beside a
same-run baseline: bm25s over the same chunks (its tokenizer with stop-words + PyStemmer,
a full index build, get_scores + best chunk per document per query).

Also measured: an incremental commit (1% of the documents changed, 0.1% removed), loading
the persisted index at start, and bm25s's own save/load of its index for comparison.
Documents are stdlib docstring paragraphs (bench/ranker/corpus.py), 100-1,500 words each.
``--quick`` runs 1k documents only.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import bm25s
import grpc
import numpy as np
import Stemmer
from quarry.v1 import index_pb2, index_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `bench.ranker.corpus` importable
    sys.path.insert(0, str(ROOT))

from index.corpus import Corpus  # noqa: E402
from index.types import Document  # noqa: E402
from quarry_text.analyzer import Analyzer  # noqa: E402

from bench.ranker import corpus as docstrings  # noqa: E402 -- after sys.path
from bench.ranker.server import start_service  # noqa: E402

STEMMER = Stemmer.Stemmer("english")
BATCH = 256  # documents per IndexDocuments call, as an indexer would send them
GRPC_MAX = 64 << 20
QUERIES = docstrings.QUERIES


def documents(
    n: int, seed: int = 3, version: int = 0, words: tuple[int, int] = (100, 1500)
) -> list[Document]:
    """``n`` markdown documents of ``words`` (low, high) words with headings."""
    rng = random.Random(seed)
    paras = docstrings.paragraphs()
    out = []
    low, high = words
    for i in range(n):
        words_left, blocks = rng.randint(low, high), [f"# Notes {i} v{version}"]
        while words_left > 0:
            if rng.random() < 0.1:
                blocks.append("## " + " ".join(rng.choice(paras).split()[:4]))
            para = rng.choice(paras)
            blocks.append(para)
            words_left -= len(para.split())
        md = "\n\n".join(blocks)
        digest = f"{hash((i, version, seed)) & (2**64 - 1):016x}"
        out.append(Document(f"local:/bench/{i:05d}.md", f"Notes {i}", md, digest, len(md), 0))
    return out


def mb(docs: list[Document]) -> float:
    """Markdown megabytes (UTF-8)."""
    return sum(len(d.markdown.encode()) for d in docs) / 1e6


def quantiles(ms: list[float]) -> str:
    """Median / p95 in ms."""
    p95 = statistics.quantiles(ms, n=20)[18] if len(ms) > 1 else ms[0]
    return f"{statistics.median(ms):8.2f} / {p95:8.2f}"


def latencies(fn: Callable[[str], object], reps: int) -> list[float]:
    """Wall ms of ``fn(query)`` over the queries, ``reps`` rounds."""
    out = []
    for _ in range(reps):
        for q in QUERIES:
            start = time.perf_counter()
            fn(q)
            out.append((time.perf_counter() - start) * 1000)
    return out


def row(name: str, seconds: float, docs: list[Document]) -> None:
    """One indexing row: wall seconds, documents/s, MB/s."""
    n = len(docs)
    rate = f"{n / seconds:9.0f} docs/s {mb(docs) / seconds:7.2f} MB/s"
    print(f"  {name:<52} {seconds:8.2f} s {rate}")


# --- baseline: bm25s over the same chunks ----------------------------------------------


class Baseline:
    """bm25s end to end over the corpus's own chunks: tokenize, index, score, best chunk
    per document."""

    def __init__(self, chunks: list[str], chunk_doc: np.ndarray, n_docs: int) -> None:
        self.chunk_doc, self.n_docs = chunk_doc, n_docs
        tokens = bm25s.tokenize(chunks, stopwords="en", stemmer=STEMMER, show_progress=False)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)

    def search(self, query: str, top_k: int = 10) -> list[int]:
        q = bm25s.tokenize(
            [query], stopwords="en", stemmer=STEMMER, show_progress=False, return_ids=False
        )
        terms = [t for t in q[0] if t in self.retriever.vocab_dict]
        if not terms:
            return []
        scores = self.retriever.get_scores(terms)
        best = np.zeros(self.n_docs)
        np.maximum.at(best, self.chunk_doc, scores)
        order = np.argsort(-best, kind="stable")[:top_k]
        return [int(i) for i in order if best[i] > 0]


# --- gRPC: the real server in its own process ------------------------------------------


def to_pb(d: Document) -> index_pb2.Document:
    """The Document message an indexer sends."""
    return index_pb2.Document(
        id=d.id, title=d.title, markdown=d.markdown, content_hash=d.content_hash, kind=d.kind
    )


def searches_during_commit(stub: index_pb2_grpc.IndexStub, docs: list[Document]) -> None:
    """SearchCorpus latency while a commit of 10% changed documents runs."""
    changed = documents(len(docs) // 10, seed=3, version=2)
    for i in range(0, len(changed), BATCH):
        batch = [to_pb(d) for d in changed[i : i + BATCH]]
        stub.IndexDocuments(index_pb2.IndexDocumentsRequest(upsert=batch))
    commit = ThreadPoolExecutor(1).submit(
        stub.CommitCorpus, index_pb2.CommitCorpusRequest(), timeout=600
    )
    start = time.perf_counter()
    ms: list[float] = []
    while not commit.done():
        ms += latencies(lambda q: stub.SearchCorpus(index_pb2.SearchCorpusRequest(query=q)), 1)
    took = time.perf_counter() - start
    commit.result()
    label = f"CommitCorpus of {len(changed)} changed docs via gRPC"
    print(f"  {label:<52} {took:8.2f} s")
    label = f"  SearchCorpus meanwhile ({len(ms)} calls), median / max"
    print(f"  {label:<52} {statistics.median(ms):8.2f} / {max(ms):8.2f} ms")


def grpc_run(docs: list[Document], reps: int) -> None:
    """Index + commit through gRPC, search latency, then a restart's load time."""
    data = Path(tempfile.mkdtemp(prefix="bench-corpus-grpc-"))
    try:
        proc, port = start_service("index", INDEX_DATA_DIR=str(data), INDEX_DENSE="false")
        opts = [("grpc.max_send_message_length", GRPC_MAX)]
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}", options=opts) as ch:
                stub = index_pb2_grpc.IndexStub(ch)
                start = time.perf_counter()
                for i in range(0, len(docs), BATCH):
                    batch = [to_pb(d) for d in docs[i : i + BATCH]]
                    stub.IndexDocuments(index_pb2.IndexDocumentsRequest(upsert=batch))
                stub.CommitCorpus(index_pb2.CommitCorpusRequest(), timeout=600)
                row("IndexDocuments + CommitCorpus via gRPC", time.perf_counter() - start, docs)
                ms = latencies(
                    lambda q: stub.SearchCorpus(index_pb2.SearchCorpusRequest(query=q)), reps
                )
                print(f"  {'SearchCorpus via gRPC, top 10':<52} {quantiles(ms)} ms")
                searches_during_commit(stub, docs)
        finally:
            proc.terminate()
            proc.wait(30)
        start = time.perf_counter()
        proc, port = start_service("index", INDEX_DATA_DIR=str(data), INDEX_DENSE="false")
        ready = time.perf_counter() - start
        proc.terminate()
        proc.wait(30)
        print(f"  {'restart: process start + index load until SERVING':<52} {ready:8.2f} s")
    finally:
        shutil.rmtree(data, ignore_errors=True)


# --- in-process ---------------------------------------------------------------------------


def index_in_process(corpus: Corpus, docs: list[Document]) -> tuple[float, float]:
    """Prepare + stage in batches, then commit; (analysis seconds, commit seconds)."""
    start = time.perf_counter()
    for i in range(0, len(docs), BATCH):
        corpus.stage(corpus.prepare(docs[i : i + BATCH]), [])
    staged = time.perf_counter()
    corpus.commit()
    return staged - start, time.perf_counter() - staged


def in_process_run(docs: list[Document], analyzer: Analyzer, reps: int) -> None:
    """Indexing (in memory and persisted), incremental commit, load, search latency."""
    memory = Corpus(analyzer)
    prep, commit = index_in_process(memory, docs)
    row("in-process, in memory: IndexDocuments + CommitCorpus", prep + commit, docs)
    print(f"  {'  of which analysis (chunking + term counts)':<52} {prep:8.2f} s")
    print(f"  {'  of which CommitCorpus (merge)':<52} {commit:8.2f} s")
    data = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        disk = Corpus(analyzer, data)
        prep, commit = index_in_process(disk, docs)
        row("in-process, persisted: IndexDocuments + CommitCorpus", prep + commit, docs)
        print(f"  {'  of which CommitCorpus (merge + write + fsync)':<52} {commit:8.2f} s")
        n = len(docs)
        changed = documents(n // 100, seed=3, version=1)  # the same ids, new text
        removed = [d.id for d in docs[-max(1, n // 1000) :]]
        start = time.perf_counter()
        disk.stage(disk.prepare(changed), removed)
        disk.commit()
        took = time.perf_counter() - start
        label = f"incremental: {len(changed)} changed + {len(removed)} removed, persisted"
        print(f"  {label:<52} {took:8.2f} s")
        start = time.perf_counter()
        loaded = Corpus(analyzer, data)
        loaded.load()
        took = time.perf_counter() - start
        size = sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) / 1e6
        print(
            f"  {'load the persisted index (checksums + mmap)':<52} {took:8.2f} s ({size:.0f} MB)"
        )
        ms = latencies(lambda q: loaded.search(q, 10), reps)
        print(f"  {'SearchCorpus in-process, top 10 (loaded index)':<52} {quantiles(ms)} ms")
    finally:
        shutil.rmtree(data, ignore_errors=True)
    ms = latencies(lambda q: memory.search(q, 10), reps)
    print(f"  {'SearchCorpus in-process, top 10 (in memory)':<52} {quantiles(ms)} ms")
    baseline_run(memory, docs, reps)


def baseline_run(memory: Corpus, docs: list[Document], reps: int) -> None:
    """bm25s over the same chunks, and how often its top 10 agrees with ours."""
    snap = memory._snapshot  # the bench reads the committed chunks directly
    chunks = [snap.chunk_text.get(i) for i in range(snap.n_chunks)]
    start = time.perf_counter()
    base = Baseline(chunks, snap.chunk_doc, len(snap.infos))
    row("baseline: bm25s tokenize + index over the same chunks", time.perf_counter() - start, docs)
    data = Path(tempfile.mkdtemp(prefix="bench-bm25s-"))
    try:
        start = time.perf_counter()
        base.retriever.save(data / "bm25s")
        saved = time.perf_counter() - start
        start = time.perf_counter()
        bm25s.BM25.load(data / "bm25s")
        loaded = time.perf_counter() - start
        print(f"  {'baseline: bm25s save / load':<52} {saved:8.2f} s / {loaded:.2f} s")
    finally:
        shutil.rmtree(data, ignore_errors=True)
    ms = latencies(base.search, reps)
    print(f"  {'baseline: bm25s get_scores + best chunk per doc':<52} {quantiles(ms)} ms")
    analyzer = Analyzer()

    def scoring_only(query: str) -> object:
        ids = [snap.term_ids[t] for t in analyzer.query_terms(query) if t in snap.term_ids]
        return snap.best_per_document(snap.scores(ids))

    ms = latencies(scoring_only, reps)
    print(f"  {'  ours, same work (no top-k, no snippets)':<52} {quantiles(ms)} ms")
    ids = {info.id: i for i, info in enumerate(snap.infos)}
    overlap = [
        len({ids[h.id] for h in memory.search(q, 10)[0]} & set(base.search(q))) for q in QUERIES
    ]
    print(f"  top-10 documents in common with the baseline, per query: {overlap}")


def main() -> None:
    """Run every size."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1k documents only")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    analyzer = Analyzer()
    for n in (1000,) if args.quick else (1000, 10_000):
        docs = documents(n)
        words = sum(len(d.markdown.split()) for d in docs)
        print(f"\n{n} documents, {words / 1e6:.1f}M words, {mb(docs):.1f} MB of markdown")
        print(f"  {'':<52} {'wall':>10}   throughput; latency: median / p95")
        in_process_run(docs, analyzer, reps=5)
        grpc_run(docs, reps=5)


if __name__ == "__main__":
    main()
