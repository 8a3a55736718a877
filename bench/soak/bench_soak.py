"""Soak: the orchestrator's memory under steady load. The real orchestrator process (`python -m
orchestrator`, with the settings `make run` gives it: sessions in SQLite under a data directory,
the newest 1,000 in memory, the search cache; the rate limiter off) answers questions at
concurrency 8 for ten minutes over the scripted LLM and SearXNG and the real reader, ranker and
index, all on 127.0.0.1; every question is new (a new session, a new search). Its resident
memory is sampled every few seconds and printed as a curve.

Verdict: after the warm-up (the first 40 % of the run, which fills the session cap and the
caches), memory must be flat: the least-squares slope of RSS over the rest, times the number of
questions asked in it, under 5 % of the RSS at the end of the warm-up. Before the fix the issue
measured 155 -> 274 MB over 3,092 questions, about 28 KB per question, still rising after the
session cap.

Run: ``.venv/bin/python bench/soak/bench_soak.py`` (``make bench``), ten minutes;
``--minutes 2`` for a short look (too short to pass the session cap at this box's pace).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the scripted fakes live with the orchestrator's tests

import httpx  # noqa: E402 - imported after the sys.path entry above

from services.orchestrator.tests.fakes.fake_llm import FakeLLM  # noqa: E402
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng  # noqa: E402
from services.orchestrator.tests.integration.support import (  # noqa: E402
    results_for,
    serve_world,
)
from tests.conftest import free_port  # noqa: E402 - the repository's one free-port helper

CONCURRENCY = 8
JSON = {"Accept": "application/json"}
SAMPLE_S = 5.0
WARM_UP = 0.4
FLAT_SHARE = 0.05


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Soak:
    """What the run saw: samples of (seconds, questions done, RSS MB) and the outcomes."""

    samples: list[tuple[float, int, float]] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    done: int = 0


def final_status(sse: str) -> str:
    """The status of the `run.completed` event in an SSE body."""
    for block in sse.split("\n\n"):
        if "event: run.completed" in block:
            data = next(ln for ln in block.splitlines() if ln.startswith("data:"))
            return str(json.loads(data[5:]).get("status"))
    return "no run.completed"


async def ask_forever(client: httpx.AsyncClient, soak: Soak, worker: int, until: float) -> None:
    """Ask new questions back to back, as the web UI does (an SSE stream each), or with
    ``Accept: application/json`` every other time, as a script does."""
    n = 0
    while time.monotonic() < until:
        n += 1
        body = {"query": f"what causes tides, question {worker}-{n}"}
        try:
            if n % 2:
                async with client.stream("POST", "/v1/search", json=body) as reply:
                    outcome = final_status((await reply.aread()).decode())
            else:
                reply = await client.post("/v1/search", json=body, headers=JSON)
                outcome = reply.json().get("status", str(reply.status_code))
        except (httpx.HTTPError, ValueError, StopIteration) as err:
            outcome = type(err).__name__
        soak.outcomes[outcome] += 1
        soak.done += 1


async def sample(pid: int, soak: Soak, start: float, until: float, fakes: list[Any]) -> None:
    while time.monotonic() < until:
        for fake in fakes:  # the scripted servers remember every request: not for a soak
            fake.requests.clear()
        elapsed = time.monotonic() - start
        soak.samples.append((elapsed, soak.done, rss_mb(pid)))
        print(
            f"  {elapsed:6.0f} s  {soak.done:6d} questions  RSS {soak.samples[-1][2]:7.1f} MB",
            flush=True,
        )
        await asyncio.sleep(SAMPLE_S)
    soak.samples.append((time.monotonic() - start, soak.done, rss_mb(pid)))


def verdict(soak: Soak) -> bool:
    """Print the post-warm-up slope and whether memory was flat."""
    first, last = soak.samples[0], soak.samples[-1]
    cut = first[0] + WARM_UP * (last[0] - first[0])
    after = [s for s in soak.samples if s[0] >= cut]
    asked = after[-1][1] - after[0][1]
    slope = statistics.linear_regression([s[1] for s in after], [s[2] for s in after]).slope
    base = after[0][2]
    grown = slope * asked
    flat = grown < FLAT_SHARE * base
    print(
        f"\nquestions: {last[1]} in {last[0]:.0f} s ({last[1] / last[0]:.1f}/s); "
        f"outcomes: {dict(soak.outcomes)}"
    )
    print(f"RSS: start {first[2]:.1f} MB, end of warm-up {base:.1f} MB, end {last[2]:.1f} MB")
    print(
        f"after warm-up: {slope * 1024:.2f} KB per question over {asked} questions "
        f"= {grown:+.1f} MB fitted ({grown / base:+.1%} of {base:.1f} MB; flat under "
        f"{FLAT_SHARE:.0%})"
    )
    print("verdict:", "FLAT after warm-up" if flat else "STILL GROWING after warm-up")
    return flat


async def main(minutes: float, data_dir: str) -> int:
    async with (
        serve_world() as world,
        FakeLLM() as llm,
        FakeSearxng(results_for(world)) as searx,
    ):
        port = free_port()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ORCHESTRATOR_"))},
            "ORCHESTRATOR_PORT": str(port),
            "READER_ADDR": world.reader_addr,
            "RANKER_ADDR": world.ranker_addr,
            "INDEX_ADDR": world.index_addr,
            "SEARXNG_URL": searx.url,
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": llm.url,
            "LLM_MODEL": llm.model,
            # One benchmark client is many users: no per-client rate limit.
            "ORCHESTRATOR_RATE_QUESTIONS": "off",
            "ORCHESTRATOR_DATA_DIR": data_dir,
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "orchestrator",
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as c:
                for _ in range(600):
                    try:
                        if (await c.get("/healthz")).status_code == 200:
                            break
                    except httpx.TransportError:
                        await asyncio.sleep(0.1)
                else:
                    raise SystemExit("the orchestrator did not start")
                soak = Soak()
                start = time.monotonic()
                until = start + minutes * 60
                print(f"soak: {minutes:g} min, concurrency {CONCURRENCY}, load {os.getloadavg()}")
                workers = [ask_forever(c, soak, w, until) for w in range(CONCURRENCY)]
                await asyncio.gather(sample(proc.pid, soak, start, until, [llm, searx]), *workers)
        finally:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 30)
    print(f"load at the end: {os.getloadavg()} (2 cores, shared)")
    return 0 if verdict(soak) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the soak")
    parser.add_argument(
        "--no-data-dir", action="store_true", help="sessions in memory only (no SQLite)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quarry-soak-") as tmp:
        sys.exit(asyncio.run(main(args.minutes, "" if args.no_data_dir else tmp)))
