"""Pipeline benchmark: the real orchestrator process (HTTP API, agent loop, gRPC and HTTP
clients) over simulated dependencies with fixed latencies, all on 127.0.0.1.

Simulated here: SearXNG 300 ms; each page 200-800 ms in the reader; a judge call 1.5 s (the
planner no time); the answer at 50 tokens/s. The orchestrator runs as its own process, as
deployed. Each number is printed beside a baseline measured in the same run:
1. overhead per question excluding the simulated waits (target <= 50 ms): the orchestrator's
   CPU per question, the wall time with every wait at zero, and the wall time with the waits
   on minus the same waits slept back to back (noisy on a shared machine);
2. read-stage wall time vs the ideal ceil(n/5) x page latency (target <= 1.1x);
3. first answer token with speculative prefetch vs without, snippet judge "insufficient"
   (target >= 25 % lower); 4. 32 concurrent questions complete with no errors.
Run: ``.venv/bin/python bench/pipeline/bench_pipeline.py`` (``make bench``), about 90 s.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the scripted fakes live with the orchestrator's tests

import httpx  # noqa: E402 - imported after the sys.path entry above
from quarry.v1 import ranker_pb2_grpc, reader_pb2_grpc  # noqa: E402
from quarry_common.grpc_server import GrpcServer  # noqa: E402

from bench.pipeline.sims import (  # noqa: E402
    ANSWER,
    JUDGE_S,
    PLAN_REAL_S,
    PLAN_S,
    SEARCH_S,
    SIM,
    TOKENS_PER_S,
    SimRanker,
    SimReader,
    SlowSearxng,
    llm_script,
    results,
)
from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Say  # noqa: E402
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng  # noqa: E402

READ_CONCURRENCY = 5
TOP_URLS = 10


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _simulators(es: AsyncExitStack) -> tuple[int, int, FakeLLM, FakeSearxng]:
    """Start the simulated reader, ranker, LLM and SearXNG (stopped by ``es``); return the
    reader's and the ranker's ports, the LLM and SearXNG."""
    reader = GrpcServer(
        lambda s: reader_pb2_grpc.add_ReaderServicer_to_server(SimReader(), s),
        host="127.0.0.1",
        port=0,
    )
    ranker = GrpcServer(
        lambda s: ranker_pb2_grpc.add_RankerServicer_to_server(SimRanker(), s),
        host="127.0.0.1",
        port=0,
    )
    reader_port, ranker_port = await reader.start(), await ranker.start()
    es.push_async_callback(reader.stop, 0)
    es.push_async_callback(ranker.stop, 0)
    llm = await es.enter_async_context(
        FakeLLM(script=llm_script, token_delay=SIM.scale / TOKENS_PER_S)
    )
    searx = await es.enter_async_context(SlowSearxng(results))
    return reader_port, ranker_port, llm, searx


def _environment(
    port: int, reader_port: int, ranker_port: int, llm: FakeLLM, searx_url: str, **settings: Any
) -> dict[str, str]:
    """The orchestrator's environment: the simulators' addresses, no limits, ``settings``."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "ORCHESTRATOR_PORT": str(port),
        "READER_ADDR": f"127.0.0.1:{reader_port}",
        "RANKER_ADDR": f"127.0.0.1:{ranker_port}",
        "SEARXNG_URL": searx_url,
        "LLM_PROVIDER": "ollama",
        "LLM_BASE_URL": llm.url,
        "LLM_MODEL": llm.model,
        "ORCHESTRATOR_LLM_MAX_INFLIGHT": "64",
        "ORCHESTRATOR_READER_MAX_INFLIGHT": "64",
        "ORCHESTRATOR_SEARXNG_MAX_INFLIGHT": "64",
        "ORCHESTRATOR_RANKER_MAX_INFLIGHT": "64",
        # One benchmark client is many simulated users: no per-client limits.
        "ORCHESTRATOR_RATE_QUESTIONS": "off",
        "ORCHESTRATOR_MAX_CLIENT_CONNECTIONS": "10000",
        **{f"ORCHESTRATOR_{k.upper()}": str(v) for k, v in settings.items()},
    }


async def _wait_until_up(base: str) -> None:
    """Wait for the orchestrator's /healthz (up to 300 tries)."""
    async with httpx.AsyncClient(base_url=base) as probe:
        for _ in range(300):
            try:
                if (await probe.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                await asyncio.sleep(0.05)
    raise SystemExit("the orchestrator did not start")


@asynccontextmanager
async def stack(**settings: Any) -> AsyncIterator[tuple[str, FakeLLM, int]]:
    """Start the simulators and the orchestrator; yield its base URL, the LLM and its pid."""
    async with AsyncExitStack() as es:
        reader_port, ranker_port, llm, searx = await _simulators(es)
        # The orchestrator runs as its own process, as deployed: its CPU is not shared with the
        # simulators and the client, which stay in this one.
        port = free_port()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "orchestrator",
            env=_environment(port, reader_port, ranker_port, llm, searx.url, **settings),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            await _wait_until_up(base)
            yield base, llm, proc.pid
        finally:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 10)


@dataclass
class Run:
    """One question as the client saw it."""

    wall_s: float
    ttft_s: float
    status: str
    timings_ms: dict[str, float]


async def ask(client: httpx.AsyncClient, query: str, **options: Any) -> Run:
    """Ask over NDJSON; time the first answer token and the end."""
    start = time.perf_counter()
    ttft = math.nan
    done: dict[str, Any] = {}
    body = {"query": query, "options": options}
    headers = {"Accept": "application/x-ndjson"}
    async with client.stream("POST", "/v1/search", json=body, headers=headers) as reply:
        async for line in reply.aiter_lines():
            event = json.loads(line)
            if event["type"] == "answer.delta" and math.isnan(ttft):
                ttft = time.perf_counter() - start
            elif event["type"] == "run.completed":
                done = event["data"]
    return Run(
        time.perf_counter() - start, ttft, done.get("status", "none"), done.get("timings_ms", {})
    )


def _lanes(query: str) -> list[list[float]]:
    """The page latencies each of the five read slots takes in turn (the semaphore's order)."""
    lanes: list[list[float]] = [[] for _ in range(READ_CONCURRENCY)]
    for r in results(query)[:TOP_URLS]:
        min(lanes, key=sum).append(SIM.page_s(r["url"]))
    return lanes


def ideal_critical_path_s(query: str, prefetch: bool) -> float:
    """The simulated waits a question cannot avoid, given its pages' latencies."""
    reads = max(sum(lane) for lane in _lanes(query))
    judge_and_reads = max(JUDGE_S, reads) if prefetch else JUDGE_S + reads
    answer = len(Say(ANSWER).deltas()) / TOKENS_PER_S
    return PLAN_S + SEARCH_S + judge_and_reads + JUDGE_S + answer


async def bare_waits_s(query: str) -> float:
    """The same critical-path sleeps, back to back, with no pipeline: the baseline that also
    carries asyncio's own oversleeping, so the difference is the pipeline's overhead."""

    async def lane(latencies: list[float]) -> None:
        for latency in latencies:
            await asyncio.sleep(latency)

    start = time.perf_counter()
    await asyncio.sleep(PLAN_S)
    await asyncio.sleep(SEARCH_S)
    await asyncio.gather(asyncio.sleep(JUDGE_S), *(lane(x) for x in _lanes(query)))
    await asyncio.sleep(JUDGE_S)
    for _ in Say(ANSWER).deltas():
        await asyncio.sleep(1 / TOKENS_PER_S)
    return time.perf_counter() - start


def row(name: str, value: str, baseline: str, ratio: str, verdict: str) -> None:
    """Print one result line."""
    print(f"{name:<46} {value:>14} {baseline:>18} {ratio:>10}  {verdict}")


def _scale(llm: FakeLLM, value: float) -> None:
    """Scale every simulated wait (0: none), the LLM's token pace included."""
    SIM.scale = value
    llm.token_delay = value / TOKENS_PER_S


async def measure_overhead(client: httpx.AsyncClient, llm: FakeLLM, pid: int) -> None:
    """1. overhead: the same questions with every simulated wait on, then off."""
    await ask(client, "warm up the stack")
    overheads, bare = [], []
    for i in range(2):
        query = f"overhead question {i}"
        run = await ask(client, query)
        bare.append(await bare_waits_s(query))
        overheads.append(run.wall_s - bare[-1])
    _scale(llm, 0.0)
    zero_n = 20
    cpu_before = cpu_s(pid)
    zero = [(await ask(client, f"zero-wait question {i}")).wall_s for i in range(zero_n)]
    cpu_ms = (cpu_s(pid) - cpu_before) / zero_n * 1000
    _scale(llm, 1.0)
    over_ms = statistics.median(overheads) * 1000
    zero_ms = statistics.median(zero) * 1000
    bare_ms = statistics.median(bare) * 1000
    row(
        "overhead beyond simulated waits (p50)",
        f"{over_ms:.1f} ms",
        f"waits {bare_ms:.0f} ms",
        f"{over_ms / 50:.2f}x",
        "<= 1.00x of 50 ms",
    )
    row(
        "orchestrator CPU per question",
        f"{cpu_ms:.1f} ms",
        "target 50 ms",
        f"{cpu_ms / 50:.2f}x",
        "<= 1.00x of 50 ms",
    )
    row(
        "whole pipeline, every wait zero (p50)",
        f"{zero_ms:.1f} ms",
        "target 50 ms",
        f"{zero_ms / 50:.2f}x",
        "<= 1.00x of 50 ms",
    )


async def measure_read_stage(client: httpx.AsyncClient) -> None:
    """2. read stage vs ceil(n/5) x page latency (prefetch off: the stage stands alone)."""
    SIM.fixed_page_s = 0.4
    reads = [
        (await ask(client, f"read stage {i}", prefetch=False)).timings_ms["read"] / 1000
        for i in range(2)
    ]
    SIM.fixed_page_s = None
    ideal = math.ceil(TOP_URLS / READ_CONCURRENCY) * 0.4
    got = statistics.median(reads)
    row(
        f"read stage, {TOP_URLS} pages at 400 ms",
        f"{got * 1000:.0f} ms",
        f"ideal {ideal * 1000:.0f} ms",
        f"{got / ideal:.3f}x",
        "<= 1.10x",
    )


async def measure_first_token(client: httpx.AsyncClient) -> None:
    """3. time to first token, prefetch on vs off, interleaved so noise hits both alike."""
    on, off = [], []
    for i in range(4):
        on.append((await ask(client, f"ttft question {i}", prefetch=True)).ttft_s)
        off.append((await ask(client, f"ttft question {i}", prefetch=False)).ttft_s)
    t_on, t_off = statistics.median(on), statistics.median(off)
    row(
        "first answer token, prefetch on",
        f"{t_on * 1000:.0f} ms",
        f"off {t_off * 1000:.0f} ms",
        f"{t_on / t_off:.3f}x",
        f"<= 0.75x ({(1 - t_on / t_off) * 100:.0f} % lower)",
    )
    d_on, d_off = t_on + PLAN_REAL_S, t_off + PLAN_REAL_S
    row(
        f"  derived: with a {PLAN_REAL_S:g} s planner call",
        f"{d_on * 1000:.0f} ms",
        f"off {d_off * 1000:.0f} ms",
        f"{d_on / d_off:.3f}x",
        f"({(1 - d_on / d_off) * 100:.0f} % lower)",
    )


async def measure_concurrency(client: httpx.AsyncClient) -> None:
    """4. 32 concurrent questions, none failing."""
    start = time.perf_counter()
    runs = await asyncio.gather(
        *(ask(client, f"concurrent question {i}") for i in range(32)), return_exceptions=True
    )
    wall = time.perf_counter() - start
    errors = [r for r in runs if not isinstance(r, Run) or r.status != "answered"]
    single = ideal_critical_path_s("concurrent question 0", prefetch=True)
    row(
        "32 concurrent questions, errors",
        f"{len(errors)}",
        "0 allowed",
        f"{wall / single:.2f}x",
        f"wall {wall:.1f} s vs one {single:.1f} s",
    )
    if errors:
        print("errors:", errors[:3])
        raise SystemExit(1)


async def main() -> None:
    """Run every measurement and print it beside its same-run baseline."""
    print(f"{'measurement':<46} {'value':>14} {'baseline':>18} {'ratio':>10}  target")
    async with stack() as (base, llm, pid), httpx.AsyncClient(base_url=base, timeout=60) as client:
        await measure_overhead(client, llm, pid)
        await measure_read_stage(client)
        await measure_first_token(client)
        await measure_concurrency(client)


if __name__ == "__main__":
    asyncio.run(main())
