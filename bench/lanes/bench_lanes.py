"""LLM lanes benchmark: time to first answer token of quick questions asked while a deep-research
run is working, with the lanes (research capped below the LLM slots, two dimensions at a time)
beside the old behaviour in the same run (research may take every slot, all dimensions at once).

The real orchestrator process over the pipeline bench's simulators (bench/pipeline), with
``ORCHESTRATOR_LLM_MAX_INFLIGHT=2`` (an Ollama with two parallel slots, say) and every LLM call
taking 1 s before it answers; the answer streams at 50 tokens/s. Idle TTFT (no research) is the
floor. Run: ``.venv/bin/python bench/lanes/bench_lanes.py`` (``make bench``), about 2 minutes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location(
    "bench_pipeline", ROOT / "bench" / "pipeline" / "bench_pipeline.py"
)
assert _spec is not None
assert _spec.loader is not None
pipeline = importlib.util.module_from_spec(_spec)
sys.modules["bench_pipeline"] = pipeline  # dataclasses look their module up there
_spec.loader.exec_module(pipeline)

from services.orchestrator.tests.fakes.fake_llm import Call, Say  # noqa: E402

CALL_S = 1.0
QUESTIONS = 6
DIMENSIONS = [f"aspect {i} of tides" for i in range(6)]
# The old behaviour: research may hold every slot, and every dimension starts at once.
BEFORE = {"llm_research_inflight": 2, "research_dimension_concurrency": 12}
AFTER: dict[str, Any] = {}
COMMON = {
    "llm_max_inflight": 2,
    "research_review_delay_s": 0,
    "research_max_iterations": 5,
    "research_max_llm_calls": 400,
    "research_max_searches": 400,
    "research_max_evaluations": 1,
    "research_budget_s": 600,
    "rate_research": "off",
}


async def script(call: Call) -> Say | None:
    """Every LLM call takes CALL_S; research's structured calls get valid replies."""
    await asyncio.sleep(CALL_S)
    props = set((call.schema or {}).get("properties", {}))
    if "dimensions" in props:
        return Say.json({"brief": "Tides.", "dimensions": DIMENSIONS})
    if "key_finding" in props:
        return Say.json({"summary": "Tides rise [1].", "key_finding": "Tides rise [1]."})
    if "coverage" in props:
        return Say.json({"reasoning": "r", "coverage": "complete", "new_dimensions": []})
    if call.kind == "judge":
        # research's judges ask for more (gap queries keep its dimensions busy); quick: enough
        gaps = ["more on tides"] if "aspect" in call.prompt else []
        verdict = "insufficient" if gaps else "sufficient"
        return Say.json({"reasoning": "r", "sufficiency": verdict, "gap_queries": gaps})
    if call.kind == "synthesis":
        return Say(pipeline.ANSWER)
    return None


async def ttfts(client: httpx.AsyncClient, label: str) -> list[float]:
    out = []
    for i in range(QUESTIONS):
        run = await pipeline.ask(client, f"{label} question {i}")
        out.append(run.ttft_s)
    return [t for t in out if not math.isnan(t)]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


async def measure(settings: dict[str, Any]) -> tuple[list[float], list[float]]:
    """(idle TTFTs, TTFTs during a research run) under ``settings``."""
    async with pipeline.stack(**COMMON, **settings) as (base, llm, _pid):
        llm.script = script
        async with httpx.AsyncClient(base_url=base, timeout=300) as client:
            idle = await ttfts(client, "idle")
            reply = await client.post("/v1/research", json={"query": "how do tides work"})
            assert reply.status_code == 202, reply.text
            run_id = reply.json()["research_id"]
            for _ in range(200):  # until the dimensions are being researched
                state = (await client.get(f"/v1/research/{run_id}")).json()
                if state.get("phase") == "research":
                    break
                await asyncio.sleep(0.1)
            busy = await ttfts(client, "busy")
            state = (await client.get(f"/v1/research/{run_id}")).json()
            if state["status"] != "running":
                print(f"  note: the research run was {state['status']} before the last question")
            await client.delete(f"/v1/research/{run_id}")
    return idle, busy


async def main() -> None:
    print(f"LLM slots 2, every call {CALL_S:g} s, {QUESTIONS} quick questions per row")
    print(f"{'configuration':<44} {'TTFT p50':>9} {'TTFT p95':>9}")
    before_idle, before = await measure(BEFORE)
    after_idle, after = await measure(AFTER)
    for name, values in (
        ("idle (no research), old behaviour", before_idle),
        ("idle (no research), lanes", after_idle),
        ("during research, old behaviour (baseline)", before),
        ("during research, lanes", after),
    ):
        print(f"{name:<44} {statistics.median(values):>8.2f}s {pct(values, 0.95):>8.2f}s")
    ratio = statistics.median(after) / statistics.median(before)
    print(f"p50 during research, lanes / old behaviour: {ratio:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
