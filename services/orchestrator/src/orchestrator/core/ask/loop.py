"""The agent loop: plan, search, rank, judge, read, rank chunks, judge, search gaps, answer."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from orchestrator.core.ask import agentic, smalltalk
from orchestrator.core.ask.direct import answer_directly
from orchestrator.core.ask.domain import Evidence, SearchHit
from orchestrator.core.ask.judge import judge_step
from orchestrator.core.ask.memory import fit
from orchestrator.core.ask.plan import plan_step
from orchestrator.core.ask.read import cancel_and_wait, chunks_step
from orchestrator.core.ask.round import find, gather
from orchestrator.core.ask.state import Deps, RunOptions, RunState
from orchestrator.core.ask.synthesise import synthesise
from orchestrator.core.ask.tools import Toolbox
from orchestrator.core.ask.unsourced import DEGRADABLE, answer_without_sources
from orchestrator.core.budget import Deadline
from orchestrator.core.context import RUN_KEY
from orchestrator.core.errors import RunFailed
from orchestrator.core.events import API_VERSION, EventSink, RunStatus
from orchestrator.core.llm import LLMError
from orchestrator.core.policy import SEARCH_OFF
from orchestrator.core.sessions import Turn

logger = logging.getLogger(__name__)

READER_DOWN = "The reader is unavailable; answering from snippets."
NOTHING_READ = "The reader could not read any page; answering from snippets."
LOCAL_ONLY = "The reader is unavailable; answering from local documents and snippets."
LLM_LOADING = (
    "The language model is still loading; the question starts when it is ready (up to {limit:g} s)."
)


@dataclass
class RunOutcome:
    """What a run leaves behind for the session."""

    status: RunStatus = "error"
    answer: str = ""
    sources: list[dict[str, Any]] = field(default_factory=list)
    # The domain policy's rules and drops ({} without rules), kept with the turn.
    policy: dict[str, Any] = field(default_factory=dict)


async def _judge_snippets(
    state: RunState, ranked: list[SearchHit], urls: list[str]
) -> list[Evidence] | None:
    """Judge the snippets while (optionally) reading the pages; the evidence if they suffice.

    None: the snippets are not enough and the pages have been read and ranked.
    """
    prior = state.chunk_evidence()
    snippets = state.snippet_evidence(ranked)
    prefetch = (
        asyncio.create_task(gather(state, urls, speculative=True)) if state.prefetch else None
    )
    try:
        verdict = await judge_step(state, "snippets", snippets)
        if verdict.sufficiency == "sufficient":
            if state.reader_down:  # found by the prefetch: say so, though snippets suffice
                state.sink.warn("reader_unavailable", READER_DOWN)
            return prior + snippets
        if prefetch is not None:
            await prefetch
        else:
            await gather(state, urls)
    finally:
        if prefetch is not None:
            await cancel_and_wait(prefetch)
    return None


async def _research(state: RunState, query: str) -> list[Evidence]:
    """Steps 2-8: search rounds until the judge is satisfied or the rounds run out."""
    queries = [query, *state.parts]
    state.add_queries([state.question, query, *state.parts])
    top = state.top_urls
    while True:
        state.rounds += 1
        try:
            ranked, queries = await find(state, queries, typed=state.question)
        except RunFailed as err:
            if state.rounds == 1:
                raise
            state.sink.warn("search_failed", f"A follow-up search failed: {err.message}")
            return state.best_evidence()
        if not ranked:
            if state.rounds == 1:
                raise RunFailed("no_results", "The search returned no results for this question.")
            state.sink.warn(
                "insufficient_evidence", "Follow-up searches found nothing new; answering."
            )
            if state.has_material:
                # The gap queries may still match passages of pages already read (or of local
                # documents already found) that the earlier queries ranked too low.
                await chunks_step(state)
            return state.best_evidence()
        urls = [h.url for h in ranked]
        if state.profile.snippet_judge:
            answer = await _judge_snippets(state, ranked[:top], urls)
            if answer is not None:
                return answer
        else:  # speed: no snippet judge, read the few top pages straight away
            await gather(state, urls)
        if not state.has_material:
            why = READER_DOWN if state.reader_down else NOTHING_READ
            state.sink.warn("reader_unavailable", why)
            return state.snippets(top)
        if state.reader_down and not state.pages:
            state.sink.warn("reader_unavailable", LOCAL_ONLY)
        if not state.profile.chunk_judge:
            return state.chunk_evidence()
        verdict = await judge_step(state, "chunks", state.chunk_evidence())
        if verdict.sufficiency == "sufficient":
            return state.chunk_evidence()
        if state.rounds >= state.max_rounds:
            state.sink.warn(
                "search_limit",
                f"Stopped after {state.rounds} search rounds; the answer may be incomplete.",
            )
            return state.chunk_evidence()
        if not verdict.gap_queries:
            state.sink.warn(
                "insufficient_evidence",
                "The evidence looks incomplete and there is nothing new to search for.",
            )
            return state.chunk_evidence()
        queries = verdict.gap_queries
        state.add_queries(queries)


def _history_evidence(history: list[Turn], limit: int) -> list[Evidence]:
    """The sources of earlier turns, newest first, one per URL, at most ``limit``."""
    evidence: dict[str, Evidence] = {}
    for turn in reversed(history):
        for src in turn.sources:
            url = str(src["url"])
            if url not in evidence:
                parts = tuple(str(p) for p in src.get("passages") or [src.get("excerpt", "")])
                evidence[url] = Evidence(
                    url, str(src.get("title", "")), "\n\n".join(parts), "history", parts
                )
    return list(evidence.values())[:limit]


async def _wait_for_llm(state: RunState) -> None:
    """Wait (bounded) for an LLM server that is still loading, saying so in a `progress` event.

    The question's budget starts once the model answers: loading is not the question's time.
    """
    gate = state.deps.llm_gate
    if gate is None or await gate.check():
        return
    limit = state.settings.llm_wait_s
    if limit <= 0:
        return  # not waiting: the first LLM call fails as it would have
    state.sink.emit(
        "progress",
        {"stage": "llm_loading", "message": LLM_LOADING.format(limit=limit), "wait_s": limit},
    )
    with state.stage("llm_wait"):
        ready = await gate.wait(limit)
    if not ready:
        raise LLMError(
            f"the LLM at {state.deps.brain.llm_url} did not become ready within {limit:g} s "
            "(LLM_WAIT_S)",
            state.deps.brain.llm_url,
        )
    state.sink.emit("progress", {"stage": "llm_ready", "message": "The language model is ready."})
    state.deadline = Deadline(state.settings.question_budget_s)


async def _run(state: RunState, outcome: RunOutcome) -> None:
    # Arithmetic and "what is the date?" need neither a search nor a model (core/ask/direct.py).
    if (direct := await answer_directly(state)) is not None:
        outcome.status, outcome.answer = "answered", direct
        return
    await _wait_for_llm(state)
    if (kind := await smalltalk.classify(state.question)) is not None:
        # Greetings, thanks, "what did I ask?": no plan, no search, nothing leaves the machine.
        with state.stage("smalltalk", kind=kind):
            outcome.answer = await answer_without_sources(state, "conversation")
        outcome.status = "answered"
        return
    if not state.options.sources:
        await _unsourced(state, outcome, RunFailed("search_off", SEARCH_OFF))
        return
    if await agentic.choose(state):  # a tool-calling model picks its own steps
        found = await agentic.run_agent(state, Toolbox(state, state.deps.documents))
        outcome.status, outcome.answer, outcome.sources = "answered", found.answer, found.sources
        return
    reserve = state.settings.synthesis_reserve_s
    evidence: list[Evidence] = []
    failed: RunFailed | None = None
    try:
        async with asyncio.timeout_at(state.deadline.at - reserve):
            plan = await plan_step(state)
            if plan.action == "clarify" and plan.clarifying_question:
                state.sink.emit("clarify", {"question": plan.clarifying_question})
                outcome.status, outcome.answer = "clarify", plan.clarifying_question
                return
            from_history = plan.history_sufficiency == "sufficient" and bool(state.history)
            if from_history:
                evidence = _history_evidence(state.history, state.top_urls)
                outcome.status = "from_history"
            else:
                query = (plan.optimized_query or "").strip() or state.question
                outcome.status = "answered"
                try:
                    evidence = await _research(state, query)
                except RunFailed as err:
                    failed = err
    except TimeoutError:
        state.sink.warn(
            "budget_exhausted",
            f"The {state.settings.question_budget_s:g} s budget ran out; "
            "answering from the evidence gathered so far.",
        )
        evidence = state.best_evidence()
        outcome.status = "answered"
        if not evidence:
            failed = RunFailed(
                "budget_exhausted", "The time budget ran out before any evidence was found."
            )
    if failed is not None:  # outside the research deadline: the answer gets the reserve
        await _unsourced(state, outcome, failed)
        return
    checked, listed = await synthesise(state, evidence)
    outcome.answer, outcome.sources = checked.text, listed


async def _unsourced(state: RunState, outcome: RunOutcome, failed: RunFailed) -> None:
    """Answer from the model alone after ``failed`` (re-raised when that is not allowed)."""
    if failed.code not in DEGRADABLE or not state.allow_unsourced:
        raise failed
    outcome.answer = await answer_without_sources(state, "unsourced", failed.message)
    outcome.status = "answered"


async def run_question(
    deps: Deps,
    sink: EventSink,
    *,
    question: str,
    history: list[Turn],
    options: RunOptions,
    run_id: str,
    session_id: str,
) -> RunOutcome:
    """Run one question to its end, emitting events; always ends with `run.completed`.

    Cancellation (the client went away) propagates: no `run.completed` is emitted then.
    """
    RUN_KEY.set(run_id)  # this task's context: the reader shares its workers fairly by run
    deadline = Deadline(deps.settings.question_budget_s)
    memory = fit(history, deps.settings.history_budget_chars())
    state = RunState(question, memory.kept, options, deps, sink, deadline)
    outcome = RunOutcome()
    start = time.perf_counter()
    sink.emit("run.started", _started(state, run_id, session_id))
    if history:
        sink.emit("memory", memory.event())
    with state.stage("run", run_id=run_id) as span:
        await _run_to_an_end(state, outcome, run_id)
        span.set_attribute("ae.status", outcome.status)
        span.set_attribute("ae.rounds", state.rounds)
    sink.emit(
        "run.completed",
        {
            "status": outcome.status,
            "rounds": state.rounds,
            "pages_read": len(state.pages),
            "llm_calls": state.llm_calls,
            "timings_ms": {k: v for k, v in state.timings_ms.items() if k != "run"},
            "duration_ms": round((time.perf_counter() - start) * 1000, 1),
        },
    )
    if options.domains.active:
        outcome.policy = {"rules": options.domains.describe(), "dropped": state.policy_dropped}
    return outcome


def _started(state: RunState, run_id: str, session_id: str) -> dict[str, Any]:
    """The `run.started` event's data: the run's identity and the settings it runs with."""
    settings = state.deps.settings
    return {
        "api_version": API_VERSION,
        "run_id": run_id,
        "session_id": session_id,
        "budget_s": settings.question_budget_s,
        "mode": state.mode,
        "max_rounds": state.max_rounds,
        "prefetch": state.prefetch,
        "sources": list(state.options.sources),
        "web_search": settings.web_search,
        "allow_unsourced": state.allow_unsourced,
    }


async def _run_to_an_end(state: RunState, outcome: RunOutcome, run_id: str) -> None:
    """Run the question; a failure becomes an `error` event and the outcome's status."""
    try:
        await _run(state, outcome)
    except RunFailed as err:
        outcome.status = "error"
        state.sink.emit("error", {"code": err.code, "message": err.message})
    except LLMError as err:
        outcome.status = "error"
        logger.warning("LLM failed", extra={"llm_url": err.url, "error": str(err)})
        # The providers' messages name the URL already; make sure every message does.
        message = str(err) if err.url in str(err) else f"{err} (LLM at {err.url})"
        state.sink.emit("error", {"code": "llm_unavailable", "message": message})
    except Exception:  # a bug must end the run with an error event, not a hang
        outcome.status = "error"
        logger.exception("run failed", extra={"run_id": run_id})
        state.sink.emit("error", {"code": "internal", "message": "The run failed unexpectedly."})
