"""Passage ranking for 10 read pages through the real ranker process (gRPC, 127.0.0.1).

Rows, interleaved per repetition so a noisy neighbour hits all alike (wall ms, p50 / p95):

- RankChunks, BM25, one ~500-word chunk per URL: the behaviour before passages (baseline);
- RankPassages, BM25 only (``dense=false``), pages sent with their text;
- RankPassages, BM25 + dense, warm: pages referred to by hash, the queries' shortlisted
  vectors cached (the same queries as the first call); what re-ranking costs in a later
  round once its passages are embedded (the target: p50 <= 150 ms);
- RankPassages, BM25 + dense, cold: pages never seen, every shortlisted vector computed in
  the call (embedding dominates);
- RankPassages, BM25 + dense, after PreparePassages: new pages, each first sent to
  PreparePassages as if just read (the agent does this while the other pages are still being
  read), then the call that follows the last read, by hash: what the first round costs on
  the critical path when the reads take longer than the embedding (the per-page prepare
  time is printed below the table).

Three queries per call (question, rewrite, one gap query). ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from quarry.v1 import ranker_pb2, ranker_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `bench.*` importable
    sys.path.insert(0, str(ROOT))

from bench.ranker import corpus  # noqa: E402 -- after sys.path
from bench.ranker.server import start_ranker  # noqa: E402

pb = ranker_pb2
PAGES, WORDS = 10, 2000


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _pages(seed: int) -> list[pb.PassagePage]:
    return [
        pb.PassagePage(url=p.url, title=p.title, markdown=p.markdown, content_hash=_sha(p.markdown))
        for p in corpus.pages(PAGES, WORDS, seed=seed)
    ]


def _refs(pages: list[pb.PassagePage]) -> list[pb.PassagePage]:
    return [pb.PassagePage(url=p.url, title=p.title, content_hash=p.content_hash) for p in pages]


def _queries(rep: int) -> list[str]:
    qs = corpus.QUERIES
    return [qs[rep % len(qs)], qs[(rep + 1) % len(qs)], qs[(rep + 2) % len(qs)]]


def _row(name: str, ms: list[float], base: float | None) -> str:
    p50 = statistics.median(ms)
    p95 = sorted(ms)[max(0, round(0.95 * len(ms)) - 1)]
    vs = f"{p50 / base:5.1f}x" if base else "   1.0x"
    return f"  {name:<52} {p50:8.1f} {p95:8.1f}  {vs}"


def run(stub: ranker_pb2_grpc.RankerStub, reps: int, cold_reps: int) -> None:
    warm = _pages(seed=11)
    chunk_pages = [pb.Page(url=p.url, title=p.title, markdown=p.markdown) for p in warm]
    # Load the warm pages (text once), as the first round of a question would.
    stub.RankPassages(pb.RankPassagesRequest(queries=_queries(0), pages=warm), timeout=300)
    cold_sets = iter([_pages(seed=100 + i) for i in range(cold_reps)])
    cases: dict[str, Callable[[int], object]] = {
        "RankChunks, BM25, 1 chunk per URL (baseline)": lambda rep: stub.RankChunks(
            pb.RankChunksRequest(query=_queries(rep)[0], pages=chunk_pages), timeout=60
        ),
        "RankPassages, BM25 only, pages with text": lambda rep: stub.RankPassages(
            pb.RankPassagesRequest(queries=_queries(rep), pages=warm, dense=False), timeout=60
        ),
        "RankPassages, BM25 + dense, warm (by hash)": lambda rep: stub.RankPassages(
            pb.RankPassagesRequest(queries=_queries(0), pages=_refs(warm)), timeout=60
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            cases[name](rep)
            times[name].append((time.perf_counter() - start) * 1000)
    cold = "RankPassages, BM25 + dense, cold (new pages)"
    times[cold] = []
    dense_flags = []
    for rep in range(cold_reps):
        pages = next(cold_sets)
        start = time.perf_counter()
        reply = stub.RankPassages(
            pb.RankPassagesRequest(queries=_queries(rep), pages=pages), timeout=300
        )
        times[cold].append((time.perf_counter() - start) * 1000)
        dense_flags.append(reply.dense)
    prepared, per_page = _prepared(stub, cold_reps)
    times["RankPassages, BM25 + dense, after PreparePassages"] = prepared
    reply = stub.RankPassages(pb.RankPassagesRequest(queries=_queries(0), pages=_refs(warm)))
    print(
        f"{PAGES} pages x ~{WORDS} words, {reply.total_passages} passages, 3 queries; "
        f"dense {'on' if all(dense_flags) and reply.dense else 'OFF (model unavailable)'}; "
        f"{reps} reps ({cold_reps} cold)"
    )
    print(f"  {'wall ms':<52} {'p50':>8} {'p95':>8}  vs baseline")
    base = statistics.median(times[names[0]])
    for name, ms in times.items():
        print(_row(name, ms, None if name == names[0] else base))
    print(
        f"  PreparePassages per page as it is read (off the critical path): p50 "
        f"{statistics.median(per_page):.0f} ms, {sum(per_page) / len(prepared):.0f} ms per "
        "10 pages"
    )


def _prepared(stub: ranker_pb2_grpc.RankerStub, reps: int) -> tuple[list[float], list[float]]:
    """New pages, each sent to PreparePassages as if just read, then the RankPassages call
    that follows the last read (by hash), as the agent does; (final call ms, per-page ms)."""
    final: list[float] = []
    per_page: list[float] = []
    for rep in range(reps):
        pages = _pages(seed=200 + rep)
        for page in pages:
            start = time.perf_counter()
            stub.PreparePassages(
                pb.PreparePassagesRequest(queries=_queries(rep), pages=[page]), timeout=300
            )
            per_page.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        stub.RankPassages(
            pb.RankPassagesRequest(queries=_queries(rep), pages=_refs(pages)), timeout=300
        )
        final.append((time.perf_counter() - start) * 1000)
    return final, per_page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few repetitions only")
    args = parser.parse_args()
    reps, cold_reps = (3, 1) if args.quick else (21, 3)
    proc, port = start_ranker(deadline_s=120)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            run(ranker_pb2_grpc.RankerStub(channel), reps, cold_reps)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
