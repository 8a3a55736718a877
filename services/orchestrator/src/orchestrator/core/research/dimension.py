"""RESEARCH for one dimension: quick search's own round (``core/ask/round.py``: search → rank →
read → passages) and judge for up to N iterations, then COMPRESS the passages into a finding."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from datetime import UTC, datetime
from typing import Any

from orchestrator.core.ask.judge import judge_step
from orchestrator.core.ask.round import find, gather
from orchestrator.core.ask.state import RunOptions, RunState
from orchestrator.core.budget import Deadline
from orchestrator.core.errors import RunFailed
from orchestrator.core.llm import LLMError
from orchestrator.core.policy import stored_domains
from orchestrator.core.research.context import BudgetSpent, Ctx
from orchestrator.core.research.events import DimensionSink
from orchestrator.core.research.prompts import compress_messages, per_source_chars
from orchestrator.core.research.schemas import Compressed
from orchestrator.core.research.state import Dimension, Finding

logger = logging.getLogger(__name__)

# SearXNG categories: the first iteration searches the general web, gap iterations rotate.
GAP_CATEGORIES = ("it", "science", "news")
_SENTENCE_RE = re.compile(r"[^.!?\n]+[.!?]?")


def category(iteration: int, index: int) -> str:
    """The category of a dimension's iteration (dimensions start their rotation apart)."""
    if iteration <= 1:
        return "general"
    return GAP_CATEGORIES[(index + iteration - 2) % len(GAP_CATEGORIES)]


def _counting(ctx: Ctx, dim: Dimension) -> Any:
    def on_event(type_: str, data: dict[str, Any]) -> None:
        if type_ == "read.completed" and data.get("status") == "OK":
            ctx.state.counters.pages_read += 1
        elif type_ == "policy":  # kept in the stored run, beside the events
            dropped = data.get("dropped", [])
            ctx.state.policy_dropped += [{"dimension": dim.id, **d} for d in dropped]

    return on_event


async def _iterate(
    ctx: Ctx, dim: Dimension, index: int, run: RunState, sink: DimensionSink
) -> None:
    queries = [dim.title]
    for iteration in range(1, ctx.settings.research_max_iterations + 1):
        sink.iteration = run.rounds = iteration
        sink.category = category(iteration, index)
        run.options = dataclasses.replace(run.options, categories=sink.category)
        ctx.spend_searches(len(queries) * len(run.options.sources))
        dim.iterations = iteration
        ctx.state.counters.iterations += 1
        try:
            # A dimension that finds nothing searches the request as the user typed it.
            ranked, _ = await find(
                run,
                queries,
                typed=ctx.query,
                on_retry=lambda: ctx.spend_searches(len(run.options.sources)),
            )
        except RunFailed as err:
            ctx.warn("search_failed", f"A search failed: {err.message}", dimension=dim.id)
            return
        if ranked:
            await gather(run, [h.url for h in ranked])
        ctx.counters()
        if iteration == ctx.settings.research_max_iterations or not run.best_evidence():
            return
        ctx.spend_llm_call()
        verdict = await judge_step(run, "chunks" if run.chunks else "snippets", run.best_evidence())
        if verdict.sufficiency == "sufficient" or not verdict.gap_queries:
            return
        queries = verdict.gap_queries


def _fallback(texts: list[str], numbers: list[int]) -> Compressed:
    """An extractive finding: the first sentence of the first passages, cited."""
    sentences = []
    for text, n in zip(texts, numbers, strict=False):
        match = _SENTENCE_RE.search(" ".join(text.split()))
        if match and match.group(0).strip():
            sentences.append(f"{match.group(0).strip().rstrip('.!?')} [{n}].")
    if not sentences:
        return Compressed(
            summary="The searches found nothing on this.", key_finding="Nothing found."
        )
    return Compressed(summary=" ".join(sentences[:3])[:1200], key_finding=sentences[0][:400])


async def _compress(ctx: Ctx, dim: Dimension, numbers: list[int]) -> Compressed:
    sources = [ctx.state.source(n) for n in numbers]
    chars = sum(len(s.text) for s in sources)
    ctx.emit(
        "research.compressing", {"dimension": dim.id, "passages": len(sources), "chars": chars}
    )
    fallback = _fallback([s.text for s in sources], numbers)
    used_default = True
    if sources:
        per = per_source_chars(ctx.settings.research_context_chars, 2000, len(sources))
        messages = compress_messages(dim.title, sources, chars=per, today=datetime.now(UTC).date())
        try:
            decision = await ctx.structured(messages, Compressed, fallback, dimension=dim.id)
            compressed, used_default = decision.value, decision.used_default
        except LLMError as err:
            ctx.warn("llm_unavailable", f"Compressing failed: {err}", dimension=dim.id)
            compressed = fallback
        except (BudgetSpent, TimeoutError):  # out of budget: the extractive finding
            compressed = fallback
    else:
        compressed = fallback
    out = len(compressed.summary) + len(compressed.key_finding)
    ctx.emit(
        "research.compressed", {"dimension": dim.id, "chars": out, "used_default": used_default}
    )
    return compressed


async def research_dimension(ctx: Ctx, dim: Dimension, index: int) -> None:
    """Research ``dim`` and record its finding (a budget or an LLM failure ends it early)."""
    dim.status = "running"
    ctx.emit(
        "research.dimension",
        {
            "id": dim.id,
            "title": dim.title,
            "status": "started",
            "iterations": 0,
            "added_by": dim.added_by,
        },
    )
    sink = DimensionSink(ctx.log, dim.id, _counting(ctx, dim))
    options = RunOptions(
        sources=tuple(ctx.state.sources_opt),
        max_rounds=1,
        prefetch=False,
        domains=stored_domains(ctx.state.domains_opt, ctx.settings),
    )
    # RunState keeps the synthesis reserve back from its deadline itself.
    deadline = Deadline(ctx.research_left() + ctx.settings.synthesis_reserve_s)
    run = RunState(dim.title, [], options, ctx.deps, sink, deadline)
    try:
        async with asyncio.timeout(ctx.research_left()):
            await _iterate(ctx, dim, index, run, sink)
    except TimeoutError:
        ctx.warn(
            "budget_exhausted",
            f"The {ctx.settings.research_budget_s:g} s research budget ran out; "
            "writing from what was found.",
        )
    except BudgetSpent as err:
        ctx.warn("budget_exhausted", f"The run has used {err}; writing from what was found.")
    except LLMError as err:
        ctx.warn("llm_unavailable", f"The judge failed: {err}", dimension=dim.id)
    numbers = [ctx.state.add_source(e.url, e.title, e.text) for e in run.best_evidence()]
    numbers = list(dict.fromkeys(numbers))
    compressed = await _compress(ctx, dim, numbers)
    finding = Finding(
        dimension=dim.id,
        title=dim.title,
        summary=compressed.summary,
        key_finding=compressed.key_finding,
        sources=numbers,
    )
    ctx.state.findings.append(finding)
    dim.status = "done"
    ctx.emit("research.finding", finding.model_dump())
    ctx.emit(
        "research.dimension",
        {
            "id": dim.id,
            "title": dim.title,
            "status": "done",
            "iterations": dim.iterations,
            "added_by": dim.added_by,
        },
    )
    ctx.counters()


async def research_all(ctx: Ctx) -> None:
    """Research every pending dimension, ``research_dimension_concurrency`` at a time (all at
    once, a run's dimensions queued ahead of every other run's calls)."""
    pending = ctx.state.pending()
    bound = asyncio.Semaphore(ctx.settings.research_dimension_concurrency)

    async def one(dim: Dimension, index: int) -> None:
        async with bound:
            await research_dimension(ctx, dim, index)

    async with asyncio.TaskGroup() as tg:
        for dim in pending:
            tg.create_task(one(dim, ctx.state.dimensions.index(dim)))
