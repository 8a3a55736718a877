"""`make test-models`: the planner and judge decisions of the default embedded model (Qwen2.5-Coder
1.5B) on labelled cases, through the orchestrator's real prompts, structured-output code and LLM
provider, against the real llama_cpp.server.

Planner cases are scored as the engine decides: the deterministic prefilter joined with the
model's verdict (``agent.plan.combine``), per category (clear first questions must proceed,
ambiguous ones must be asked back, follow-ups must name their referent); the model alone is
shown beside. Prints a table and `N/M correct` per category. The score is information, not a
gate: the exit status is 0 whatever the model decides, 1 when the server or the plumbing fails
(the server does not start, a call errors, or the model's output is never valid JSON).

    python -m bench.models.decisions [--model qwen|gemma]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from orchestrator.adapters.llm.factory import build_llm
from orchestrator.config import Settings
from orchestrator.core.ask.brain import LLMBrain
from orchestrator.core.ask.intent import prefilter
from orchestrator.core.ask.plan import combine
from orchestrator.core.lanes import LlmLanes
from orchestrator.core.llm import LLMError
from orchestrator.core.schemas import Plan

from bench.models.cases import JUDGE_CASES, PLAN_CASES, PlanCase
from scripts import embedded_llm, llm_select

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 300.0
# One structured call on 2 CPU cores: ~40 s for a cold 1.5k-token prompt with the 1.5B model.
CALL_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Row:
    """One case's outcome."""

    category: str
    name: str
    expected: str
    got: str
    right: bool
    seconds: float
    used_default: bool
    # The model's own verdict, before the prefilter joins it (None: not applicable).
    model_right: bool | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    end = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the LLM server exited with status {proc.returncode}")
        try:
            if httpx.get(f"{url}/v1/models", timeout=2).is_success:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the LLM server did not answer within {READY_TIMEOUT_S:.0f} s")


def _plan_outcome(case: PlanCase, model: Plan) -> tuple[bool, bool, str]:
    """(engine right, model alone right, what the engine did) for one planner case."""
    pre = prefilter(case.question, has_history=bool(case.turns))
    plan = combine(pre, model, case.question, case.turns)
    query = (plan.optimized_query or "").lower()
    model_query = (model.optimized_query or case.question).lower()
    if case.category == "clear":
        right, alone = plan.action == "proceed", model.action == "proceed"
    elif case.category == "ambiguous":
        right, alone = plan.action == "clarify", model.action == "clarify"
    else:
        right = plan.action == "proceed" and any(w in query for w in case.referent)
        alone = model.action == "proceed" and any(w in model_query for w in case.referent)
    got = f"{plan.action} [{pre.verdict}; model {model.action}]"
    if plan.action == "clarify":
        got += f" {(plan.clarifying_question or '')[:40]!r}"
    else:
        got += f" query {query[:48]!r}, history {plan.history_sufficiency}"
    return right, alone, got


async def _plan_rows(brain: LLMBrain) -> list[Row]:
    rows = []
    expected = {"clear": "proceed", "ambiguous": "clarify", "follow-up": "names the referent"}
    for case in PLAN_CASES:
        start = time.monotonic()
        decision = await brain.plan(case.question, case.turns, timeout=CALL_TIMEOUT_S)
        right, alone, got = _plan_outcome(case, decision.value)
        rows.append(
            Row(
                case.category,
                case.name,
                expected[case.category],
                got,
                right,
                time.monotonic() - start,
                decision.used_default,
                alone,
            )
        )
    return rows


async def _judge_rows(brain: LLMBrain) -> list[Row]:
    rows = []
    for case in JUDGE_CASES:
        start = time.monotonic()
        decision = await brain.judge(
            case.question, case.evidence(), stage="chunks", timeout=CALL_TIMEOUT_S
        )
        verdict = decision.value.sufficiency
        rows.append(
            Row(
                "judge",
                case.name,
                case.verdict,
                verdict,
                verdict == case.verdict,
                time.monotonic() - start,
                decision.used_default,
            )
        )
    return rows


def _report(rows: list[Row], model: str) -> None:
    width = max(len(r.name) for r in rows)
    print(f"\nModel: {model}\n")
    print(f"{'':2}{'category':<10} {'case':<{width}}  {'s':>5}  expected -> got")
    for r in rows:
        mark = "ok" if r.right else "--"
        note = "  [invalid output: safe default]" if r.used_default else ""
        print(
            f"{mark:2}{r.category:<10} {r.name:<{width}}  {r.seconds:5.1f}  "
            f"{r.expected} -> {r.got}{note}"
        )
    print()
    for category in ("clear", "ambiguous", "follow-up", "judge"):
        mine = [r for r in rows if r.category == category]
        line = f"{category:<10} {sum(r.right for r in mine)}/{len(mine)} correct"
        alone = [r.model_right for r in mine if r.model_right is not None]
        if alone:
            line += f"  (the model alone: {sum(alone)}/{len(alone)})"
        print(line)
    planner = [r for r in rows if r.category != "judge"]
    print(f"planner    {sum(r.right for r in planner)}/{len(planner)} correct")
    print(f"total      {sum(r.right for r in rows)}/{len(rows)} correct")


async def _evaluate(url: str, spec: embedded_llm.ModelSpec) -> list[Row]:
    settings = Settings(
        LLM_PROVIDER="openai",
        LLM_BASE_URL=url,
        LLM_MODEL=spec.key,
        LLM_SCHEMA_DIALECT="json_object",
        LLM_FOLD_SYSTEM=spec.fold_system,
        # make run's sampling for the embedded model (greedy, no repeat penalty)
        LLM_TEMPERATURE=float(llm_select.EMBEDDED_SAMPLING["LLM_TEMPERATURE"]),
        LLM_REPEAT_PENALTY=float(llm_select.EMBEDDED_SAMPLING["LLM_REPEAT_PENALTY"]),
        LLM_TIMEOUT_S=CALL_TIMEOUT_S,
        LLM_FIRST_TOKEN_TIMEOUT_S=CALL_TIMEOUT_S,
    )
    async with httpx.AsyncClient(timeout=CALL_TIMEOUT_S) as http:
        brain = LLMBrain(build_llm(settings, http), settings, LlmLanes(1))
        return [*await _plan_rows(brain), *await _judge_rows(brain)]


def main() -> None:
    """Assemble the model, start its server, run the cases, print the score."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(embedded_llm.MODELS), default="qwen")
    args = parser.parse_args()
    spec = embedded_llm.MODELS[args.model]
    data_dir = Path(os.environ.get("QUARRY_DATA_DIR", ROOT / ".data"))
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        model = embedded_llm.assemble(spec, data_dir / "models")
    except embedded_llm.ModelError as err:
        raise SystemExit(f"test-models: {err}") from None
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = embedded_llm.server_command(sys.executable, model, spec, "127.0.0.1", port)
    print(f">> starting llama_cpp.server with {spec.title} on {url}", file=sys.stderr)
    env = {**os.environ, **embedded_llm.server_env()}
    log = (data_dir / "test-models-llm.log").open("wb")
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_ready(url, proc)
        rows = asyncio.run(_evaluate(url, spec))
    except LLMError as err:
        raise SystemExit(f"test-models: the LLM call failed: {err}") from None
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    _report(rows, spec.title)
    invalid = [r.name for r in rows if r.used_default]
    if invalid:
        raise SystemExit(f"test-models: no valid structured output for: {', '.join(invalid)}")


if __name__ == "__main__":
    main()
