"""SYNTHESIS: the report, section by section, streamed; every section's citations checked.

Each section's prompt holds compressed findings and passages cut to fit
``research_context_chars``: however many dimensions and sources a run gathers, no prompt
outgrows the model's context (a peer engine's known failure is overflowing it at report time).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from orchestrator.core.citations import check_citations
from orchestrator.core.llm import LLMError, Message
from orchestrator.core.research.context import Ctx
from orchestrator.core.research.prompts import DUE_DILIGENCE_SECTIONS, SUMMARY, section_messages
from orchestrator.core.research.state import PASSAGE_CHARS, Finding, ResearchState, Section, Source

# Sources per finding that the summary and the closing sections see.
SOURCES_PER_FINDING = 2
# The shortest passage or note worth giving, and what a source's fence lines cost.
MIN_CHARS = 200
FENCE_CHARS = 160
_SLUG_DROP = re.compile(r"[^\w\- ]")


@dataclass(frozen=True)
class Plan:
    """One section to write: its notes and the sources it may cite."""

    key: str
    title: str
    instruction: str
    notes: list[Finding]
    sources: list[Source]


def slug(title: str) -> str:
    """A Markdown heading's anchor (GitHub style)."""
    return _SLUG_DROP.sub("", title.strip().lower()).replace(" ", "-")


def plan_sections(state: ResearchState, mode: str) -> list[Plan]:
    """Summary, one section per finding, then the due-diligence sections."""
    findings = state.findings
    top = [state.source(n) for f in findings for n in f.sources[:SOURCES_PER_FINDING]]
    top = list({s.n: s for s in top}.values())
    key, title, instruction = SUMMARY
    plans = [Plan(key, title, instruction, list(findings), top)]
    for f in findings:
        plans.append(
            Plan(
                f.dimension,
                f.title,
                f"Report what the sources say about: {f.title}.",
                [f],
                [state.source(n) for n in f.sources],
            )
        )
    if mode == "due-diligence":
        plans += [Plan(k, t, i, list(findings), top) for k, t, i in DUE_DILIGENCE_SECTIONS]
    return plans


def contents(plans: Sequence[Plan]) -> str:
    """The table of contents."""
    lines = [f"- [{p.title}](#{slug(p.title)})" for p in plans]
    lines.append("- [Sources](#sources)")
    return "\n".join(lines)


def source_list(sources: Sequence[Source]) -> str:
    """The numbered source list."""
    return "\n".join(f"[{s.n}] [{s.title or s.url}]({s.url})" for s in sources)


def assemble(query: str, state: ResearchState, plans: Sequence[Plan]) -> str:
    """The whole report: title, contents, sections, sources."""
    sections = "\n".join(f"## {s.title}\n\n{s.body.strip()}\n" for s in state.sections)
    return (
        f"# {query}\n\n## Contents\n\n{contents(plans)}\n\n{sections}\n"
        f"## Sources\n\n{source_list(state.sources)}\n"
    )


def fit(ctx: Ctx, plan: Plan) -> tuple[Plan, int, int]:
    """The plan cut to the context budget: (plan with the sources that fit, chars per source,
    chars per note). Half the budget goes to the notes, the rest to the passages; when even
    the shortest passages do not all fit, the later (lower-ranked) sources are left out."""
    budget = ctx.settings.research_context_chars
    note_chars = max(MIN_CHARS, min(900, (budget // 2) // max(len(plan.notes), 1)))
    room = max(budget - len(plan.notes) * (note_chars + 20), 0)
    keep = max(1, min(len(plan.sources), room // (MIN_CHARS + FENCE_CHARS)))
    chars = max(MIN_CHARS, min(PASSAGE_CHARS, room // keep - FENCE_CHARS))
    return dataclasses.replace(plan, sources=plan.sources[:keep]), chars, note_chars


def prompt_for(ctx: Ctx, plan: Plan) -> list[Message]:
    """The section's messages, cut to the context budget (``fit`` the plan first)."""
    fitted, chars, note_chars = fit(ctx, plan)
    return section_messages(
        ctx.query,
        fitted.title,
        fitted.instruction,
        fitted.notes,
        fitted.sources,
        chars=chars,
        note_chars=note_chars,
        today=datetime.now(UTC).date(),
    )


async def _stream(ctx: Ctx, plan: Plan) -> None:
    messages = prompt_for(ctx, plan)
    stream = ctx.llm.stream(messages, timeout=max(ctx.deadline.remaining(), 0.001))
    try:
        async with asyncio.timeout(ctx.deadline.remaining()):
            async for delta in stream:
                if delta:
                    ctx.state.draft += delta
                    ctx.emit("report.chunk", {"section": plan.key, "text": delta})
    except TimeoutError:
        ctx.warn("budget_exhausted", "The time budget ran out while writing; the report is cut.")
    except LLMError as err:
        # The compressed findings carry their own citations: the section still says something.
        ctx.warn(
            "llm_unavailable",
            f"Writing a section failed ({err}); using the findings.",
            section=plan.key,
        )
        fallback = "\n\n".join(f"{f.key_finding} {f.summary}" for f in plan.notes)
        ctx.state.draft = fallback
        ctx.emit("report.chunk", {"section": plan.key, "text": fallback})
    finally:
        # Closing the generator closes the LLM's HTTP stream now, not at garbage collection.
        if isinstance(stream, AsyncGenerator):
            await stream.aclose()


async def write_section(ctx: Ctx, plan: Plan) -> None:
    """Stream one section, check its citations against the sources it was given, keep it."""
    plan = fit(ctx, plan)[0]
    state = ctx.state
    state.draft_title, state.draft = plan.title, ""
    ctx.emit("report.chunk", {"section": plan.key, "text": f"## {plan.title}\n\n"})
    await _stream(ctx, plan)
    checked = check_citations(state.draft, [(s.n, s.text) for s in plan.sources])
    body = checked.text.strip() or "(Nothing was written for this section.)"
    state.cited = sorted(set(state.cited) | set(checked.cited))
    state.removed_citations = sorted(set(state.removed_citations) | set(checked.removed_citations))
    state.sections.append(Section(key=plan.key, title=plan.title, body=body))
    state.draft_title, state.draft = "", ""
    ctx.emit("report.chunk", {"section": plan.key, "text": "\n\n"})


async def synthesise(ctx: Ctx) -> None:
    """Write the report; emit `report.completed` with the checked text."""
    state = ctx.state
    state.sections, state.report, state.cited, state.removed_citations = [], "", [], []
    plans = plan_sections(state, ctx.mode)
    head = f"# {ctx.query}\n\n## Contents\n\n{contents(plans)}\n\n"
    ctx.emit("report.chunk", {"section": "contents", "text": head})
    for plan in plans:
        ctx.state.counters.llm_calls += 1  # counted, never refused: the report gets written
        await write_section(ctx, plan)
    tail = f"## Sources\n\n{source_list(state.sources)}\n"
    ctx.emit("report.chunk", {"section": "sources", "text": tail})
    state.report = assemble(ctx.query, state, plans)
    ctx.emit(
        "report.completed",
        {
            "report": state.report,
            "sources": [s.public() for s in state.sources],
            "cited": state.cited,
            "removed_citations": state.removed_citations,
        },
    )
