"""Steps 4 and 7: the sufficiency judge over snippets or chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from orchestrator.core.ask.domain import Evidence
from orchestrator.core.ask.plan import INVALID_OUTPUT, LLM_TIMEOUT
from orchestrator.core.ask.state import RunState
from orchestrator.core.schemas import Judgement

MAX_GAP_QUERIES = 3


async def judge_step(
    state: RunState, stage: Literal["snippets", "chunks"], evidence: Sequence[Evidence]
) -> Judgement:
    """Judge ``evidence``; emit a `judge` event with the verdict and gap queries."""
    evidence = state.clip(evidence)
    with state.stage("judge", stage=stage, evidence=len(evidence)) as span:
        state.llm_calls += 1
        decision = await state.deps.brain.judge(
            state.question,
            evidence,
            stage=stage,
            timeout=state.research_left(),
            boundary=state.boundary,
        )
        verdict = decision.value
        gaps = [q.strip() for q in verdict.gap_queries if q.strip()][:MAX_GAP_QUERIES]
        span.set_attribute("ae.verdict", verdict.sufficiency)
        span.set_attribute("ae.gap_queries", len(gaps))
        span.set_attribute("ae.used_default", decision.used_default)
    if decision.timed_out:
        state.sink.warn("llm_timeout", LLM_TIMEOUT)
    elif decision.used_default:
        state.sink.warn("llm_invalid_output", INVALID_OUTPUT)
    state.sink.emit(
        "judge",
        {
            "stage": stage,
            "round": state.rounds,
            "verdict": verdict.sufficiency,
            "reasoning": verdict.reasoning,
            "gap_queries": gaps,
            "used_default": decision.used_default,
        },
    )
    return verdict.model_copy(update={"gap_queries": gaps})
