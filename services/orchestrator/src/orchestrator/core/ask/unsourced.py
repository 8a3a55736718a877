"""Answers without sources: the degraded path when search is off, down, slow or empty, and
small talk that needs no search at all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from orchestrator.core.ask.state import RunState
from orchestrator.core.ask.synthesise import emit_completed, stream_answer
from orchestrator.core.support import SentenceMark

WARNING = "answered_without_sources"
# Put before the model's first token so the label cannot be lost, whatever the model writes.
LABEL = (
    "(No sources: this answer comes from the model's own knowledge, "
    "without a search, and may be incomplete or out of date.)\n\n"
)
# Research failures the model alone can still answer after.
DEGRADABLE = frozenset({"search_unavailable", "no_results", "budget_exhausted", "search_off"})


async def answer_without_sources(
    state: RunState, purpose: Literal["unsourced", "conversation"], reason: str = ""
) -> str:
    """Stream an answer with an empty source list; return its text (citations removed).

    ``unsourced`` answers carry the label and an ``answered_without_sources`` warning naming
    ``reason``; ``conversation`` answers (greetings, thanks, questions about the chat) carry
    neither: they never needed sources.
    """
    if purpose == "unsourced":
        state.sink.warn(WARNING, f"{reason} Answering from the model's own knowledge.".strip())
    state.sink.emit("sources", {"sources": []})
    with state.stage("synthesis", sources=0, purpose=purpose):
        stream = state.deps.brain.converse(
            state.question, state.history, purpose=purpose, timeout=state.deadline.remaining()
        )
        prefix = LABEL if purpose == "unsourced" else ""
        # No sources: every [n] the model wrote anyway is removed, sentence by sentence.
        _, marks = await stream_answer(state, stream, prefix, mark=_uncited(state))
        text = "".join(m.text for m in marks)
        checked = state.deps.brain.check(text, [])
    emit_completed(state, checked)
    return checked.text


def _uncited(state: RunState) -> Callable[[str], SentenceMark]:
    def mark(sentence: str) -> SentenceMark:
        return SentenceMark(state.deps.brain.check(sentence, []).text, [], None, 0.0)

    return mark
