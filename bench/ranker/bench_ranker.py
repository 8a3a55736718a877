"""Ranker benchmark: RankResults (50 results) and RankChunks (30 pages x ~5,000 words),
in-process and through gRPC, beside a same-run baseline that builds a fresh bm25s index
with bm25s's own tokenizer (stop-words + PyStemmer) on every call.

Implementations are interleaved per repetition in rotating order, so a noisy neighbour
hits all of them alike; cells are wall ms, median / p95. ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bm25s
import grpc
import numpy as np
import Stemmer
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `bench.ranker.corpus` importable
    sys.path.insert(0, str(ROOT))

from quarry_text.analyzer import Analyzer, AnalyzerConfig  # noqa: E402
from quarry_text.bm25 import bm25_scores  # noqa: E402
from quarry_text.chunking import Page, chunk_pages  # noqa: E402
from quarry_text.rrf import rrf_scores  # noqa: E402
from ranker.chunks import rank_chunks  # noqa: E402
from ranker.model import SearchResult  # noqa: E402
from ranker.results import rank_results  # noqa: E402
from ranker.service import (  # noqa: E402
    chunks_from_proto,
    chunks_to_proto,
    ranked_to_proto,
    results_from_proto,
)
from ranker.urls import merge_duplicates, normalize_url  # noqa: E402

from bench.ranker import corpus  # noqa: E402 -- after sys.path
from bench.ranker.server import start_ranker  # noqa: E402

STEMMER = Stemmer.Stemmer("english")


class Timings(dict[str, list[float]]):
    """Wall ms per implementation, plus this thread's CPU ms in ``cpu``."""

    def __init__(self) -> None:
        super().__init__()
        self.cpu: dict[str, list[float]] = {}


async def interleaved(fns: dict[str, Callable[[int], object]], reps: int) -> Timings:
    """Run each function ``reps`` times (argument: the repetition), rotating the order;
    an awaitable result is awaited inside the timing."""
    out = Timings()
    for name in fns:
        out[name], out.cpu[name] = [], []
    names = list(fns)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            cpu, start = time.thread_time(), time.perf_counter()
            result = fns[name](rep)
            if inspect.isawaitable(result):
                await result
            out[name].append((time.perf_counter() - start) * 1000)
            out.cpu[name].append((time.thread_time() - cpu) * 1000)
    return out


def table(title: str, t: Timings, base: str, rebase: dict[str, str] | None = None) -> None:
    """Print wall median / p95, CPU median (in-process rows) and the speed-ups over the
    ``base`` row by wall and CPU medians; ``rebase`` gives some rows another base row."""
    print(f"\n{title}")
    print(f"  {'':<48} {'wall median / p95 ms':>20} {'CPU ms':>7}   speed-up: wall, CPU")
    for name, ms in t.items():
        b = (rebase or {}).get(name, base)
        med, p95 = statistics.median(ms), statistics.quantiles(ms, n=20)[18]
        cpu = statistics.median(t.cpu[name])
        ratio = f"x{statistics.median(t[b]) / med:4.1f}"
        cell = f"{'-':>7}"
        if "gRPC" not in name:  # a gRPC call's CPU is mostly in the server process
            ratio += f", x{statistics.median(t.cpu[b]) / cpu:4.1f}"
            cell = f"{cpu:7.2f}"
        print(f"  {name:<48} {med:9.2f} / {p95:8.2f} {cell}   {ratio}")


# --- baselines: bm25s with its own tokenizer, a fresh index per call --------------------


def bm25s_scores(query: str, texts: list[str]) -> np.ndarray:
    """bm25s end to end: tokenize (stop-words, stemmer), index, score."""
    corpus_tokens = bm25s.tokenize(texts, stopwords="en", stemmer=STEMMER, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus_tokens, show_progress=False)
    q = bm25s.tokenize(
        [query], stopwords="en", stemmer=STEMMER, show_progress=False, return_ids=False
    )
    terms = [t for t in q[0] if t in retriever.vocab_dict]
    return retriever.get_scores(terms) if terms else np.zeros(len(texts))


def baseline_results(query: str, results: list[SearchResult]) -> list[int]:
    """bm25s, one index per field, 2 x title + snippet, fused with the engine order."""
    merged = merge_duplicates(results)
    title = bm25s_scores(query, [r.title for r in merged])
    snippet = bm25s_scores(query, [r.snippet for r in merged])
    scores = 2 * title + snippet
    lexical = [i for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    fused = rrf_scores([list(range(len(merged))), lexical])
    return sorted(fused, key=lambda i: -fused[i])


def baseline_chunks(query: str, pages: list[Page], top_k: int = 8) -> list[int]:
    """Same chunking, then bm25s end to end, best chunk per URL, top ``top_k``."""
    chunks = chunk_pages(pages)
    scores = bm25s_scores(query, [c.text for c in chunks])
    seen: set[str] = set()
    best = []
    for i in np.argsort(-scores, kind="stable"):
        key = normalize_url(chunks[i].url)
        if key not in seen:
            seen.add(key)
            best.append(int(i))
    return best[:top_k]


# --- gRPC: the real server in its own process ------------------------------------------


def results_request(query: str, results: list[SearchResult]) -> ranker_pb2.RankResultsRequest:
    """The RankResults request an orchestrator would send."""
    return ranker_pb2.RankResultsRequest(
        query=query,
        results=[
            ranker_pb2.SearchResult(
                url=r.url,
                title=r.title,
                snippet=r.snippet,
                engine_rank=r.engine_rank,
                engines=r.engines,
            )
            for r in results
        ],
    )


def chunks_request(query: str, pages: list[Page]) -> ranker_pb2.RankChunksRequest:
    """The RankChunks request an orchestrator would send."""
    return ranker_pb2.RankChunksRequest(
        query=query,
        pages=[ranker_pb2.Page(url=p.url, title=p.title, markdown=p.markdown) for p in pages],
    )


# --- the runs ---------------------------------------------------------------------------


async def bench_analyser(texts: list[str], reps: int) -> None:
    """Analyser variants over the chunk texts (warm stem cache) against bm25s.tokenize."""
    variants = {
        f"stem={stem} stopwords={stop}": Analyzer(AnalyzerConfig(stem=stem, stopwords=stop))
        for stem in (True, False)
        for stop in (True, False)
    }

    def analyse(analyzer: Analyzer) -> Callable[[int], object]:
        return lambda _r: [analyzer.terms(t) for t in texts]

    fns = {f"analyser {name}": analyse(a) for name, a in variants.items()}
    fns["analyser surface tokens only"] = lambda _r: [Analyzer.surface_tokens(t) for t in texts]
    fns["bm25s.tokenize + stemmer (baseline)"] = lambda _r: bm25s.tokenize(
        texts, stopwords="en", stemmer=STEMMER, show_progress=False
    )
    for fn in fns.values():
        fn(0)  # warm the stem caches
    t = await interleaved(fns, reps)
    words = sum(len(x.split()) for x in texts)
    title = f"analyser over {len(texts)} chunks, {words} words (warm stem cache)"
    table(title, t, "bm25s.tokenize + stemmer (baseline)")
    per_word = {k: f"{statistics.median(v) * 1000 / words:.2f}" for k, v in t.cpu.items()}
    print(f"  CPU us/word: {per_word}")


def mapped_results(analyzer: Analyzer, raw: bytes) -> bytes:
    """The servicer's work without transport: parse, map, rank, map back, serialise."""
    request = ranker_pb2.RankResultsRequest.FromString(raw)
    results, params = results_from_proto(analyzer, request)
    return ranked_to_proto(
        *rank_results(analyzer, request.query, results, params)
    ).SerializeToString()


def mapped_chunks(analyzer: Analyzer, raw: bytes) -> bytes:
    """The servicer's work without transport: parse, map, rank, map back, serialise."""
    request = ranker_pb2.RankChunksRequest.FromString(raw)
    pages, params = chunks_from_proto(analyzer, request)
    return chunks_to_proto(*rank_chunks(analyzer, request.query, pages, params)).SerializeToString()


async def bench_results(
    stub: ranker_pb2_grpc.RankerAsyncStub, health: health_pb2_grpc.HealthAsyncStub, reps: int
) -> Timings:
    """RankResults with 50 results."""
    analyzer = Analyzer()
    results = corpus.results(50)
    queries = corpus.QUERIES
    requests = [results_request(q, results) for q in queries]
    raws = [r.SerializeToString() for r in requests]
    check = health_pb2.HealthCheckRequest()
    fns: dict[str, Callable[[int], object]] = {
        "bm25s 2 indices + RRF (baseline)": lambda r: baseline_results(queries[r % 10], results),
        "RankResults in-process": lambda r: rank_results(analyzer, queries[r % 10], results),
        "RankResults in-process + proto mapping": lambda r: mapped_results(analyzer, raws[r % 10]),
        "RankResults via gRPC": lambda r: stub.RankResults(requests[r % 10], timeout=10),
        "health Check via gRPC (transport floor)": lambda _r: health.Check(check, timeout=10),
    }
    for fn in fns.values():
        await x if inspect.isawaitable(x := fn(0)) else None
    t = await interleaved(fns, reps)
    size = requests[0].ByteSize()
    title = f"RankResults, 50 results ({size / 1024:.1f} KiB request)"
    table(title, t, "bm25s 2 indices + RRF (baseline)")
    return t


async def bench_chunks(
    stub: ranker_pb2_grpc.RankerAsyncStub, pages: list[Page], reps: int
) -> Timings:
    """RankChunks over 30 pages x ~5,000 words."""
    analyzer = Analyzer()
    queries = corpus.QUERIES
    requests = [chunks_request(q, pages) for q in queries]
    raws = [r.SerializeToString() for r in requests]
    texts = [c.text for c in chunk_pages(pages)]
    base_chunks = chunk_pages(pages)
    fns: dict[str, Callable[[int], object]] = {
        "chunking + bm25s tokenize/index (baseline)": lambda r: baseline_chunks(
            queries[r % 10], pages
        ),
        "RankChunks in-process": lambda r: rank_chunks(analyzer, queries[r % 10], pages),
        "RankChunks in-process + proto mapping": lambda r: mapped_chunks(analyzer, raws[r % 10]),
        "RankChunks via gRPC": lambda r: stub.RankChunks(requests[r % 10], timeout=30),
        "  scoring only: bm25s tokenize+index (baseline)": lambda r: bm25s_scores(
            queries[r % 10], texts
        ),
        "  scoring only: term counts + bm25s index": lambda r: bm25_scores(
            analyzer, analyzer.query_terms(queries[r % 10]), texts
        ),
        "  chunking only (both)": lambda _r: chunk_pages(pages),
    }
    for fn in fns.values():
        await x if inspect.isawaitable(x := fn(0)) else None
    t = await interleaved(fns, reps)
    words = sum(len(p.markdown.split()) for p in pages)
    size = requests[0].ByteSize()
    title = f"RankChunks, {len(pages)} pages, {words} words, {len(texts)} chunks"
    score_base = "  scoring only: bm25s tokenize+index (baseline)"
    table(
        f"{title} ({size / 1024:.0f} KiB request)",
        t,
        "chunking + bm25s tokenize/index (baseline)",
        {k: score_base for k in t if k.startswith("  scoring")},
    )
    overlap = [
        len(
            {c.chunk.url for c in rank_chunks(analyzer, q, pages)[0]}
            & {base_chunks[i].url for i in baseline_chunks(q, pages)}
        )
        for q in queries
    ]
    # One chunk per page in each top 8, so compare the pages chosen.
    print(f"  top-8 pages in common with the baseline, per query: {overlap}")
    return t


def verdict(results: Timings, chunks: Timings) -> None:
    """Print the targets of issue 4 against this run's medians (wall; CPU in brackets)."""
    both = {**results, **chunks}
    cpu_of = {**results.cpu, **chunks.cpu}
    med = {k: statistics.median(v) for k, v in both.items()}
    cpu = {k: statistics.median(v) for k, v in cpu_of.items()}
    rr, rc = med["RankResults in-process"], med["RankChunks in-process"]
    rr_cpu, rc_cpu = cpu["RankResults in-process"], cpu["RankChunks in-process"]
    base = "chunking + bm25s tokenize/index (baseline)"
    speedup, speedup_cpu = med[base] / rc, cpu[base] / rc_cpu
    grpc_small = med["RankResults via gRPC"] - med["RankResults in-process + proto mapping"]
    grpc_big = med["RankChunks via gRPC"] - med["RankChunks in-process + proto mapping"]
    floor = med["health Check via gRPC (transport floor)"]
    checks = [
        (f"RankResults in-process {rr:.2f} ms [{rr_cpu:.2f}] <= 2 ms", rr <= 2),
        (f"RankChunks in-process {rc:.1f} ms [{rc_cpu:.1f}] <= 40 ms", rc <= 40),
        (f"RankChunks x{speedup:.1f} [x{speedup_cpu:.1f}] vs the baseline (>= 2x)", speedup >= 2),
        (
            f"gRPC adds {grpc_small:.2f} ms to RankResults (<= 1 ms; empty call {floor:.2f})",
            grpc_small <= 1,
        ),
        (f"gRPC adds {grpc_big:.2f} ms to RankChunks, ~1 MB (<= 6 ms)", grpc_big <= 6),
    ]
    print("\ntargets, by wall medians [CPU medians] of this run (a loaded shared box inflates")
    print("wall time; gRPC rows: wall(gRPC) - wall(in-process with proto mapping), server in its")
    print("own process; the empty call is a health Check on the same channel):")
    for text, ok in checks:
        print(f"  [{'met' if ok else 'MISSED'}] {text}")


async def main() -> None:
    """Run every section."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    args = parser.parse_args()
    reps_small, reps_big = (20, 5) if args.quick else (300, 40)
    pages = corpus.pages(30, 5000)
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    await bench_analyser([c.text for c in chunk_pages(pages)], max(3, reps_big // 4))
    proc, port = start_ranker(deadline_s=30)
    try:
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 64 << 20)]
        ) as channel:
            stub = ranker_pb2_grpc.RankerStub(channel)
            health = health_pb2_grpc.HealthStub(channel)
            results = await bench_results(stub, health, reps_small)
            chunks = await bench_chunks(stub, pages, reps_big)
    finally:
        proc.terminate()
        proc.wait(10)
    verdict(results, chunks)


if __name__ == "__main__":
    asyncio.run(main())
