"""Step 9: number the sources, stream the answer, then check its citations."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from orchestrator.agent.domain import Evidence
from orchestrator.agent.fusion import origin_of
from orchestrator.agent.ports import Checked
from orchestrator.agent.state import RunState
from orchestrator.errors import RunFailed
from orchestrator.llm.think import Thought

EXCERPT_CHARS = 300


def number_sources(evidence: Sequence[Evidence]) -> list[Evidence]:
    """One source per distinct URL, in the order given (so source n is ``result[n-1]``)."""
    seen: dict[str, Evidence] = {}
    for item in evidence:
        if item.url not in seen:
            seen[item.url] = item
    return list(seen.values())


def with_dates(sources: Sequence[Evidence], state: RunState) -> list[Evidence]:
    """Sources with the publication date their search result gave, so the model can prefer
    recent pages and the UI can show dates."""
    dates = {h.url: h.published for h in state.hits if h.published}
    return [
        s if s.published or s.url not in dates else replace(s, published=dates[s.url])
        for s in sources
    ]


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
            "published": s.published,
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
    sources = with_dates(state.clip(number_sources(evidence)), state)
    listed = source_list(sources)
    state.sink.emit("sources", {"sources": listed})
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
        text = await stream_answer(state, stream)
        checked = state.deps.brain.check(text, sources)
        span.set_attribute("ae.cited", len(checked.cited))
        span.set_attribute("ae.removed_citations", len(checked.removed_citations))
    emit_completed(state, checked)
    return checked, listed


def emit_completed(state: RunState, checked: Checked) -> None:
    """The `answer.completed` event for a checked answer."""
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


async def stream_answer(state: RunState, stream: AsyncIterator[str], prefix: str = "") -> str:
    """Emit the model's deltas as `answer.delta`s (``prefix`` before the first) and return the
    whole text.

    The stream stops at the question's deadline (with a warning); what was written by then is
    kept. A model that sent no visible text at all ends the run with a clear error instead of
    an empty answer.

    Raises:
        RunFailed: ``no_answer`` when not one answer token arrived.
    """
    parts: list[str] = []
    timed_out = False
    try:
        async with asyncio.timeout(state.deadline.remaining()):
            async for delta in stream:
                if not delta:
                    continue
                if isinstance(delta, Thought):
                    state.sink.emit("thinking", {"text": str(delta)})
                    continue
                if prefix and not parts:
                    parts.append(prefix)
                    state.sink.emit("answer.delta", {"text": prefix})
                parts.append(delta)
                state.sink.emit("answer.delta", {"text": delta})
    except TimeoutError:
        timed_out = True
    finally:
        # Closing the generator closes the LLM's HTTP stream now, not at garbage collection.
        if isinstance(stream, AsyncGenerator):
            await stream.aclose()
    text = "".join(parts)
    if not text[len(prefix) :].strip():
        why = "before the time budget ran out" if timed_out else "(an empty reply)"
        raise RunFailed(
            "no_answer",
            f"The model at {state.deps.brain.llm_url} sent no answer {why}; "
            "try again, or check the LLM server.",
        )
    if timed_out:
        state.sink.warn(
            "budget_exhausted", "The time budget ran out while writing; the answer is cut short."
        )
    return text
