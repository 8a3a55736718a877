"""Extract throughput through gRPC (2 workers) vs bare trafilatura.extract in-process.

The reader runs Trafilatura twice per page (a precision and a recall pass, combined by
reader.passes), so "bare" here is those two passes too: the ratio measures what the service
adds (transport, worker pool), not the second pass, whose cost bench_aeb.py reports.

Corpus: Debian documentation HTML (``apt-get install python3-doc``) when installed, else
generated article pages. Prints pages/s and median ms/page for both, their ratio
(target >= 0.9x bare), and the gRPC overhead per call.
Run: ``.venv/bin/python bench/reader/bench_extract.py [--pages N] [--workers N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import grpc
import trafilatura

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.server import build_server

from bench.reader.corpus import doc_pages, generated_pages

Pages = list[tuple[str, bytes]]


def _two_passes(body: bytes) -> None:
    trafilatura.extract(body, favor_precision=True)
    trafilatura.extract(body, favor_recall=True)


def bare(pages: Pages) -> tuple[float, list[float]]:
    """Sequential in-process trafilatura.extract, the reader's two passes: (pages/s, ms)."""
    times = []
    start = time.perf_counter()
    for _, body in pages:
        t0 = time.perf_counter()
        _two_passes(body)
        times.append((time.perf_counter() - t0) * 1000)
    return len(pages) / (time.perf_counter() - start), times


async def _call(stub: reader_pb2_grpc.ReaderAsyncStub, body: bytes, ctype: str) -> float:
    t0 = time.perf_counter()
    reply = await stub.Extract(
        reader_pb2.ExtractRequest(html=body, content_type=ctype), timeout=120
    )
    if ctype == "text/html" and reply.status not in (
        reader_pb2.ReadResponse.OK,
        reader_pb2.ReadResponse.EMPTY,
    ):
        raise RuntimeError(f"Extract failed: {reply.status} {reply.error}")
    return (time.perf_counter() - t0) * 1000


async def through_grpc(
    stub: reader_pb2_grpc.ReaderAsyncStub, pages: Pages, concurrency: int
) -> tuple[float, list[float]]:
    """Extract every page over gRPC with ``concurrency`` calls in flight."""
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for _, body in pages:
        queue.put_nowait(body)
    times: list[float] = []

    async def worker() -> None:
        while not queue.empty():
            times.append(await _call(stub, queue.get_nowait(), "text/html"))

    start = time.perf_counter()
    async with asyncio.TaskGroup() as tg:
        for _ in range(concurrency):
            tg.create_task(worker())
    return len(pages) / (time.perf_counter() - start), times


async def paired(
    stub: reader_pb2_grpc.ReaderAsyncStub, pages: Pages
) -> tuple[list[float], list[float]]:
    """Per page, bare then one gRPC Extract back to back: (bare ms, reader ms).

    Pairing page by page keeps load changes on the shared box out of the difference.
    """
    bare_ms, ours_ms = [], []
    for _, body in pages:
        t0 = time.perf_counter()
        _two_passes(body)
        bare_ms.append((time.perf_counter() - t0) * 1000)
        ours_ms.append(await _call(stub, body, "text/html"))
    return bare_ms, ours_ms


async def overhead(stub: reader_pb2_grpc.ReaderAsyncStub, body: bytes, calls: int) -> float:
    """Median round trip of an Extract the server answers without extracting (transport only)."""
    return statistics.median([await _call(stub, body, "image/png") for _ in range(calls)])


async def run(pages: Pages, workers: int, rounds: int) -> None:
    """Start a reader, measure in interleaved rounds (best of each), print."""
    settings = Settings(port=0, workers=workers, queue_size=256, extract_timeout_s=120)
    server = build_server(settings)
    await server.start()
    bare_rates, ours_rates = [], []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = reader_pb2_grpc.ReaderStub(channel)
            await through_grpc(stub, pages[:4], workers)  # warm connections and workers
            # Interleaved rounds, best of each: the box is shared, and load comes and goes.
            for _ in range(rounds):
                bare_rates.append(bare(pages)[0])
                ours_rates.append((await through_grpc(stub, pages, 2 * workers))[0])
            bare_ms, seq_ms = await paired(stub, pages)
            median_body = sorted(pages, key=lambda p: len(p[1]))[len(pages) // 2][1]
            rpc_ms = await overhead(stub, median_body, 50)
    finally:
        await server.stop(0)
    bare_rate, ours_rate = max(bare_rates), max(ours_rates)
    print(f"{'':34} {'pages/s':>8} {'median ms/page':>15}")
    bare_median = statistics.median(bare_ms)
    print(f"{'bare trafilatura.extract x2 (1 proc)':34} {bare_rate:8.1f} {bare_median:15.1f}")
    print(
        f"{'reader Extract via gRPC':34} {ours_rate:8.1f} {statistics.median(seq_ms):15.1f}"
        f"   ({workers} workers, {2 * workers} calls in flight; ms/page: one call at a time,"
        " paired with bare per page)"
    )
    load = os.getloadavg()[0]
    print(
        f"throughput ratio reader/bare: {ours_rate / bare_rate:.2f}x (target >= 0.9x); "
        f"best of {rounds} interleaved rounds, load average {load:.1f}"
    )
    print(
        f"gRPC overhead per call (median round trip, {len(median_body) // 1024} KB body, "
        f"no extraction): {rpc_ms:.2f} ms"
    )
    per_page = statistics.median(s - b for s, b in zip(seq_ms, bare_ms, strict=True))
    print(f"median paired difference per page, reader via gRPC - bare: {per_page:+.1f} ms")


def main() -> int:
    """Pick the corpus and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pages = doc_pages(args.pages)
    if pages:
        source = "Debian python3-doc HTML"
    else:
        print("python3-doc HTML not found (apt-get install python3-doc); using generated pages")
        pages, source = generated_pages(args.pages * 3), "generated article pages"
    total_kb = sum(len(b) for _, b in pages) // 1024
    print(f"corpus: {len(pages)} {source}, {total_kb} KB total")
    asyncio.run(run(pages, args.workers, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
