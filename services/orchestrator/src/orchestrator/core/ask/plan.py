"""Step 1: plan over the question and the session history.

The planner model's verdict is combined with the deterministic prefilter (core/ask/intent.py):
the code decides what it can (clear questions proceed, bare pronouns with no history are asked
back, follow-ups name their referent) and the model decides the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.core.ask.expand import keyword_query, sub_questions
from orchestrator.core.ask.intent import (
    Prefilter,
    TurnLike,
    carry_context,
    clarifying_question,
    prefilter,
    resolve_query,
)
from orchestrator.core.ask.state import RunState
from orchestrator.core.schemas import Plan

INVALID_OUTPUT = "The LLM gave no valid structured output after a retry; a safe default was used."
LLM_TIMEOUT = "The LLM did not decide within LLM_TIMEOUT_S; a safe default was used."


def combine(pre: Prefilter, model: Plan | None, question: str, history: Sequence[TurnLike]) -> Plan:
    """The plan the loop follows: the prefilter's verdict joined with the model's (if asked).

    * unresolved (a bare pronoun, no history): clarify, with the model's question if it wrote one;
    * candidate: the model decides;
    * clear: proceed, whatever the model said.

    A plan that proceeds always carries a query that names the referent of a pronoun, and
    an elliptical follow-up's query the last question's key terms.
    """
    clarify = pre.verdict == "unresolved" or (
        pre.verdict == "candidate" and model is not None and model.action == "clarify"
    )
    if clarify:
        asked = (model.clarifying_question or "").strip() if model is not None else ""
        return Plan(
            action="clarify",
            clarifying_question=asked or clarifying_question(pre),
            optimized_query=None,
            history_sufficiency="insufficient",
        )
    query = ((model.optimized_query if model is not None else None) or "").strip() or question
    sufficiency = model.history_sufficiency if model is not None and history else "insufficient"
    return Plan(
        action="proceed",
        clarifying_question=None,
        optimized_query=carry_context(resolve_query(query, history), question, history),
        history_sufficiency=sufficiency,
    )


async def plan_step(state: RunState) -> Plan:
    """Clarify, answer from history, or search with an optimised query (see ``combine``)."""
    pre = prefilter(state.question, has_history=bool(state.history))
    ask_model = state.profile.plan_always or pre.verdict != "clear" or pre.needs_rewrite
    model: Plan | None = None
    used_default = False
    if ask_model:
        with state.stage("plan", history_turns=len(state.history)) as span:
            state.llm_calls += 1
            decision = await state.deps.brain.plan(
                state.question, state.history, timeout=state.research_left()
            )
            model, used_default = decision.value, decision.used_default
            span.set_attribute("ae.action", model.action)
            span.set_attribute("ae.history_sufficiency", model.history_sufficiency)
            span.set_attribute("ae.used_default", used_default)
        if decision.timed_out:
            state.sink.warn("llm_timeout", LLM_TIMEOUT)
        elif used_default:
            state.sink.warn("llm_invalid_output", INVALID_OUTPUT)
    plan = combine(pre, model, state.question, state.history)
    if plan.action == "proceed":
        # A keyword query ranks the passages too (expand.py), beside the planner's rewrite
        # where it ran: a rewrite keeps the question's phrasing (often the question itself),
        # and only the passages matched against one phrasing were kept; the keyword query's
        # cue words ("default", "maximum limit") find an entry's value on a reference page.
        extra = keyword_query(plan.optimized_query or state.question)
        rewrite = [plan.optimized_query] if model is not None and plan.optimized_query else []
        state.add_queries([state.question, *rewrite, *([extra] if extra else [])])
    if plan.action == "proceed" and not state.history:
        # A question asking two things: each part searched and ranked too (expand.py).
        state.parts = sub_questions(state.question)
    state.sink.emit(
        "plan",
        {
            "action": plan.action,
            "history_sufficiency": plan.history_sufficiency,
            "optimized_query": plan.optimized_query,
            "used_default": used_default,
            "planner": "model" if ask_model else "skipped",
            "prefilter": pre.verdict,
            "model_action": model.action if model is not None else None,
        },
    )
    return plan
