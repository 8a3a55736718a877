"""Questions answered without a search or a model: arithmetic and today's date or the time.

A deterministic pre-check in front of both the pipeline and the agent mode: the calculator's
parser (core/ask/calc.py) or the date pattern (core/ask/clock.py) must match the whole question, so
anything with more to it ("the population of France times 2") still goes to the model.
Nothing leaves the machine and no LLM call is made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from orchestrator.core.ask import calc, clock
from orchestrator.core.ask.ports import Checked
from orchestrator.core.ask.state import RunState
from orchestrator.core.ask.synthesise import emit_completed, stream_answer
from orchestrator.core.support import SupportReport


def direct_answer(question: str, now: clock.Clock = clock.system_now) -> tuple[str, str] | None:
    """(kind, answer) when the question is only arithmetic or only asks the date or time."""
    found = calc.arithmetic(question)
    if found is not None:
        return "calculator", f"{found.expression} = **{found.value}**"
    if clock.asks_now(question):
        return "clock", clock.describe(now())
    return None


async def answer_directly(state: RunState) -> str | None:
    """Answer ``state``'s question without searching when it can be (the answer), else None."""
    found = direct_answer(state.question)
    if found is None:
        return None
    kind, text = found
    with state.stage("direct", kind=kind):
        state.sink.emit("progress", {"stage": "direct", "tool": kind})
        state.sink.emit("sources", {"sources": []})
        written, marks = await stream_answer(state, once(text))
        emit_completed(state, Checked(written, [], []), SupportReport(marks))
    return written


async def once(text: str) -> AsyncIterator[str]:
    """``text`` as a one-delta stream."""
    yield text
