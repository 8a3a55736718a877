"""The rerank step and CheckSupport for 10 read pages, beside BM25 + dense alone, same run.

Two real ranker processes (gRPC, 127.0.0.1): RANKER_RERANK=off and =on (its time cap lifted
so every call is measured in full). Rows (wall ms, p50 / p95), interleaved per repetition:

- RankPassages, BM25 + dense, warm pages (by hash): the baseline;
- the same call with the rerank step (the fused top RANKER_RERANK_CANDIDATES rescored);
- both again on pages never seen (every shortlisted vector, and every sentence unit, new);
- CheckSupport: a five-sentence answer, each sentence citing two of the chosen passages;
- CheckSupport as the orchestrator calls it, once per answer after the stream: every cited
  sentence of an answer over the 10 pages (12 sentences, each citing two chosen passages).

Three queries per call. ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
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

from bench.passages.bench_passages import _pages, _queries, _refs, _row  # noqa: E402
from bench.ranker.server import start_ranker  # noqa: E402

pb = ranker_pb2
Stub = ranker_pb2_grpc.RankerStub


def _answer(passages: list[str], sentences: int = 5) -> pb.CheckSupportRequest:
    """``sentences`` sentences, each the opening of a chosen passage reworded a little, citing
    it and the next one."""
    claims = []
    for i in range(sentences):
        text = passages[i % len(passages)]
        sentence = " ".join(text.split()[:18]).rstrip(".,;:") + "."
        cited = [text, passages[(i + 1) % len(passages)]]
        claims.append(pb.SupportClaim(sentence=sentence, passages=cited))
    return pb.CheckSupportRequest(claims=claims)


def run(off: Stub, on: Stub, reps: int, cold_reps: int) -> None:
    """Time every case and print the table."""
    warm = _pages(seed=11)
    for stub in (off, on):  # the first round of a question: pages sent with their text
        stub.RankPassages(pb.RankPassagesRequest(queries=_queries(0), pages=warm), timeout=600)
    first = on.RankPassages(pb.RankPassagesRequest(queries=_queries(0), pages=_refs(warm)))
    support = _answer([p.text for p in first.passages])
    answer = _answer([p.text for p in first.passages], sentences=12)
    cases: dict[str, Callable[[int], object]] = {
        "BM25 + dense, warm (baseline)": lambda rep: off.RankPassages(
            pb.RankPassagesRequest(queries=_queries(rep), pages=_refs(warm)), timeout=600
        ),
        "BM25 + dense + rerank, warm": lambda rep: on.RankPassages(
            pb.RankPassagesRequest(queries=_queries(rep), pages=_refs(warm)), timeout=600
        ),
        "CheckSupport, 5 sentences x 2 passages": lambda rep: on.CheckSupport(support, timeout=600),
        "CheckSupport, one answer: 12 sentences x 2 passages": lambda rep: on.CheckSupport(
            answer, timeout=600
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
    for label, stub in (("BM25 + dense, cold pages", off), ("BM25 + dense + rerank, cold", on)):
        times[label] = []
        for rep in range(cold_reps):
            pages = _pages(seed=300 + rep)
            start = time.perf_counter()
            stub.RankPassages(pb.RankPassagesRequest(queries=_queries(rep), pages=pages), 600)
            times[label].append((time.perf_counter() - start) * 1000)
    reply = on.RankPassages(pb.RankPassagesRequest(queries=_queries(0), pages=_refs(warm)))
    print(
        f"10 pages, {reply.total_passages} passages, 3 queries; reranked {reply.reranked}"
        f"{' (' + reply.rerank_note + ')' if reply.rerank_note else ''}; "
        f"{reps} reps ({cold_reps} cold)"
    )
    print(f"  {'wall ms':<52} {'p50':>8} {'p95':>8}  vs baseline")
    base = statistics.median(times[names[0]])
    for name, ms in times.items():
        print(_row(name, ms, None if name == names[0] else base))


def main() -> None:
    """Start both rankers, run, stop them."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few repetitions only")
    args = parser.parse_args()
    reps, cold = (3, 1) if args.quick else (20, 4)
    procs = []
    try:
        proc_off, port_off = start_ranker(120, RANKER_RERANK="off")
        procs.append(proc_off)
        proc_on, port_on = start_ranker(120, RANKER_RERANK="on", RANKER_RERANK_SECONDS="60")
        procs.append(proc_on)
        with (
            grpc.insecure_channel(f"127.0.0.1:{port_off}") as ch_off,
            grpc.insecure_channel(f"127.0.0.1:{port_on}") as ch_on,
        ):
            run(Stub(ch_off), Stub(ch_on), reps, cold)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
