"""Step 9: number the sources, stream the answer, then check its citations."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from orchestrator.agent.domain import Evidence
from orchestrator.agent.fusion import origin_of
from orchestrator.agent.ports import Checked
from orchestrator.agent.state import RunState

EXCERPT_CHARS = 300


def number_sources(evidence: Sequence[Evidence]) -> list[Evidence]:
    """One source per distinct URL, in the order given (so source n is ``result[n-1]``)."""
    seen: dict[str, Evidence] = {}
    for item in evidence:
        if item.url not in seen:
            seen[item.url] = item
    return list(seen.values())


def source_list(sources: Sequence[Evidence]) -> list[dict[str, Any]]:
    """The `sources` event payload: ``[{n, url, title, excerpt, origin, passages}]``, n = 1..N;
    ``passages`` are the texts the model saw for the source."""
    return [
        {
            "n": n,
            "url": s.url,
            "title": s.title,
            "excerpt": _excerpt(s.text),
            "origin": origin_of(s.url),
            "passages": list(s.parts),
        }
        for n, s in enumerate(sources, start=1)
    ]


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"


async def synthesise(state: RunState, evidence: Sequence[Evidence]) -> tuple[Checked, list[Any]]:
    """Emit `sources`, stream `answer.delta`s, emit the checked `answer.completed`.

    The stream stops at the question's deadline (with a warning); what was written by then is
    still checked and returned.
    """
    sources = state.clip(number_sources(evidence))
    listed = source_list(sources)
    state.sink.emit("sources", {"sources": listed})
    parts: list[str] = []
    with state.stage("synthesis", sources=len(sources)) as span:
        state.llm_calls += 1
        stream = state.deps.brain.answer(
            state.question,
            sources,
            state.history,
            timeout=state.deadline.remaining(),
            boundary=state.boundary,
            detail=state.options.detail,
        )
        try:
            async with asyncio.timeout(state.deadline.remaining()):
                async for delta in stream:
                    if delta:
                        parts.append(delta)
                        state.sink.emit("answer.delta", {"text": delta})
        except TimeoutError:
            state.sink.warn(
                "budget_exhausted",
                "The time budget ran out while writing; the answer is cut short.",
            )
        finally:
            # Closing the generator closes the LLM's HTTP stream now, not at garbage collection.
            if isinstance(stream, AsyncGenerator):
                await stream.aclose()
        checked = state.deps.brain.check("".join(parts), sources)
        span.set_attribute("ae.cited", len(checked.cited))
        span.set_attribute("ae.removed_citations", len(checked.removed_citations))
    state.sink.emit(
        "answer.completed",
        {
            "text": checked.text,
            "cited": checked.cited,
            "removed_citations": checked.removed_citations,
            "replaced": checked.replaced,
            "added_citations": checked.added_citations,
        },
    )
    return checked, listed
