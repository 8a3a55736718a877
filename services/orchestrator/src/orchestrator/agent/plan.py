"""Step 1: plan over the question and the session history."""

from __future__ import annotations

from orchestrator.agent.state import RunState
from orchestrator.schemas import Plan

INVALID_OUTPUT = "The LLM gave no valid structured output after a retry; a safe default was used."
LLM_TIMEOUT = "The LLM did not decide within LLM_TIMEOUT_S; a safe default was used."


async def plan_step(state: RunState) -> Plan:
    """Ask the LLM to clarify, answer from history, or search with an optimised query."""
    with state.stage("plan", history_turns=len(state.history)) as span:
        decision = await state.deps.brain.plan(
            state.question, state.history, timeout=state.research_left()
        )
        plan = decision.value
        span.set_attribute("ae.action", plan.action)
        span.set_attribute("ae.history_sufficiency", plan.history_sufficiency)
        span.set_attribute("ae.used_default", decision.used_default)
    if decision.timed_out:
        state.sink.warn("llm_timeout", LLM_TIMEOUT)
    elif decision.used_default:
        state.sink.warn("llm_invalid_output", INVALID_OUTPUT)
    state.sink.emit(
        "plan",
        {
            "action": plan.action,
            "history_sufficiency": plan.history_sufficiency,
            "optimized_query": plan.optimized_query,
            "used_default": decision.used_default,
        },
    )
    return plan
