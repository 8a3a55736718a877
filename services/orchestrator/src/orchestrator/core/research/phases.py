"""SCOPE, PLAN REVIEW and EVALUATE: the structured calls around the research itself."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime

from orchestrator.core.citations import strip_citations
from orchestrator.core.research.context import Ctx
from orchestrator.core.research.prompts import evaluate_messages, scope_messages
from orchestrator.core.research.schemas import DIMENSION_CHARS, Evaluation, Scope, fallback_scope
from orchestrator.core.research.state import ResearchState

MAX_NEW_DIMENSIONS = 3


def clean_titles(titles: Iterable[str], existing: Iterable[str] = ()) -> list[str]:
    """Trimmed, non-empty, without repeats (case-insensitive), each cut to a search query.

    Citation markers are dropped: a title becomes a search query, a heading, a contents line
    and a plan shown in the UI, none of which a citation check reads (Gemma 270M once wrote a
    "[1000…0]" into one, and the report cited a source that does not exist)."""
    seen = {t.strip().lower() for t in existing}
    out = []
    for title in titles:
        text = " ".join(strip_citations(title).split())[:DIMENSION_CHARS]
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return out


def dimension_list(state: ResearchState, ids: Iterable[str] | None = None) -> list[dict[str, str]]:
    """``[{id, title}]`` of the given dimensions (all when None)."""
    wanted = set(ids) if ids is not None else None
    return [
        {"id": d.id, "title": d.title} for d in state.dimensions if wanted is None or d.id in wanted
    ]


async def scope(ctx: Ctx) -> None:
    """One structured call → the brief and the dimensions (the query alone when invalid)."""
    state = ctx.state
    default = fallback_scope(ctx.query)
    messages = scope_messages(ctx.query, ctx.mode, ctx.earlier, today=datetime.now(UTC).date())
    decision = await ctx.structured(messages, Scope, default)
    titles = clean_titles(decision.value.dimensions)[: ctx.settings.research_max_dimensions]
    state.brief = decision.value.brief.strip() or ctx.query
    state.dimensions = []
    for title in titles or clean_titles(default.dimensions) or [ctx.query]:
        state.add_dimension(title, "scope")
    state.scoped = True
    ctx.emit(
        "scope.completed",
        {
            "brief": state.brief,
            "dimensions": dimension_list(state),
            "used_default": decision.used_default,
            "review_s": ctx.settings.research_review_delay_s,
        },
    )


async def review(ctx: Ctx, continued: asyncio.Event) -> None:
    """Show the plan: go on after the review delay, or at once when a client continues."""
    try:
        async with asyncio.timeout(ctx.settings.research_review_delay_s):
            await continued.wait()
    except TimeoutError:
        pass
    ctx.state.reviewed = True


def replace_dimensions(state: ResearchState, titles: list[str]) -> None:
    """A client's edit during the plan review."""
    state.dimensions = []
    for title in clean_titles(titles):
        state.add_dimension(title, "user")


async def evaluate(ctx: Ctx, round_: int) -> None:
    """Check coverage; add up to three dimensions for the gaps (none: evaluation is done)."""
    state = ctx.state
    default = Evaluation(reasoning="No valid evaluation from the model.", coverage="complete")
    messages = evaluate_messages(
        ctx.query, state.brief, state.findings, today=datetime.now(UTC).date()
    )
    decision = await ctx.structured(messages, Evaluation, default)
    value = decision.value
    titles = []
    if value.coverage == "gaps":
        existing = [d.title for d in state.dimensions]
        titles = clean_titles(value.new_dimensions, existing)[:MAX_NEW_DIMENSIONS]
    new = [state.add_dimension(t, "evaluation").id for t in titles]
    record = {
        "round": round_,
        "coverage": value.coverage,
        "reasoning": value.reasoning,
        "new_dimensions": dimension_list(state, new),
        "used_default": decision.used_default,
    }
    state.evaluations.append(record)
    if not new:
        state.evaluation_done = True
    ctx.emit("research.evaluation", record)
