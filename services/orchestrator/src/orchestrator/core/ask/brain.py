"""The Brain the loop uses in production: prompts + structured calls + citation checks."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, aclosing
from datetime import UTC, datetime
from typing import Literal, TypeVar

from pydantic import BaseModel

from orchestrator.config import Settings
from orchestrator.core.ask.domain import Evidence
from orchestrator.core.ask.ports import Checked, Decision
from orchestrator.core.citations import check_citations
from orchestrator.core.lanes import Lane, LlmLanes
from orchestrator.core.llm import LLMClient, LLMTimeout, Message
from orchestrator.core.prompts import judge_messages, plan_messages, synthesis_messages
from orchestrator.core.prompts_chat import conversation_messages, unsourced_messages
from orchestrator.core.schemas import Judgement, Plan
from orchestrator.core.sessions import Turn
from orchestrator.core.structured import default_judgement, default_plan, structured_call

logger = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


def _today() -> datetime:
    return datetime.now(UTC)


class LLMBrain:
    """Plans, judges and answers with one LLM; every call holds a slot of its ``lane``
    (``orchestrator/core/lanes.py``: interactive calls first, research capped below the total)."""

    def __init__(
        self, llm: LLMClient, settings: Settings, lanes: LlmLanes, lane: Lane = "interactive"
    ) -> None:
        self._llm = llm
        self._settings = settings
        self._lanes = lanes
        self.lane: Lane = lane

    def for_research(self) -> LLMBrain:
        """The same LLM and slots, every call in the research lane (deep research's brain)."""
        return LLMBrain(self._llm, self._settings, self._lanes, "research")

    def _limit(self) -> AbstractAsyncContextManager[None]:
        return self._lanes.slot(self.lane)

    @property
    def llm_url(self) -> str:
        """The LLM server's base URL."""
        return self._llm.base_url

    async def plan(
        self, question: str, history: Sequence[Turn], *, timeout: float
    ) -> Decision[Plan]:
        """Clarify, answer from history, or search with an optimised query."""
        messages = plan_messages(question, history, today=_today().date())
        return await self._decide(messages, Plan, default_plan(), timeout)

    async def judge(
        self,
        question: str,
        evidence: Sequence[Evidence],
        *,
        stage: Literal["snippets", "chunks"],
        timeout: float,
        boundary: str | None = None,
    ) -> Decision[Judgement]:
        """Whether ``evidence`` (snippets or page passages) answers ``question``."""
        messages = judge_messages(
            question, evidence, stage=stage, today=_today().date(), boundary=boundary
        )
        return await self._decide(messages, Judgement, default_judgement(), timeout)

    async def _decide(
        self, messages: list[Message], model: type[M], default: M, timeout: float
    ) -> Decision[M]:
        """One structured call; past LLM_TIMEOUT_S the safe default, so the run goes on."""
        try:
            async with self._limit():
                result = await structured_call(self._llm, messages, model, default, timeout=timeout)
        except LLMTimeout as err:
            logger.warning("structured call timed out; default used", extra={"error": str(err)})
            return Decision(default, used_default=True, attempts=1, timed_out=True)
        return Decision(result.value, result.used_default, result.attempts)

    async def answer(
        self,
        question: str,
        sources: Sequence[Evidence],
        history: Sequence[Turn],
        *,
        timeout: float,
        boundary: str | None = None,
        detail: str | None = None,
    ) -> AsyncIterator[str]:
        """Stream the answer; the LLM slot is held until the stream ends or is closed."""
        messages = synthesis_messages(
            question, sources, history, today=_today().date(), boundary=boundary, detail=detail
        )
        async with aclosing(self._stream(messages, timeout)) as stream:
            async for delta in stream:
                yield delta

    async def converse(
        self,
        question: str,
        history: Sequence[Turn],
        *,
        purpose: Literal["unsourced", "conversation"],
        timeout: float,
    ) -> AsyncIterator[str]:
        """Stream an answer with no sources (own knowledge, or about the conversation)."""
        build = unsourced_messages if purpose == "unsourced" else conversation_messages
        messages = build(question, history, today=_today().date())
        async with aclosing(self._stream(messages, timeout)) as stream:
            async for delta in stream:
                yield delta

    async def _stream(self, messages: list[Message], timeout: float) -> AsyncGenerator[str]:
        # the LLM slot is held until the stream ends or is closed
        async with self._limit():
            # Thinking comes along (as Thought deltas): forwarded as `thinking` events, never
            # part of the answer or the citation check.
            stream = self._llm.stream_chat(messages, timeout=timeout, thoughts=True)
            try:
                async for delta in stream:
                    yield delta
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()

    def check(self, answer: str, sources: Sequence[Evidence]) -> Checked:
        """Remove citations to no source; fix or drop the ones the source does not support."""
        return check_answer(answer, sources)

    # --- generic calls for other pipelines (deep research), in this brain's lane ---

    async def structured(
        self, messages: list[Message], model_cls: type[M], default: M, *, timeout: float
    ) -> Decision[M]:
        """One validated structured call (repaired once, then ``default``)."""
        async with self._limit():
            result = await structured_call(self._llm, messages, model_cls, default, timeout=timeout)
        return Decision(result.value, result.used_default, result.attempts)

    async def stream(self, messages: list[Message], *, timeout: float) -> AsyncIterator[str]:
        """Stream a free-text reply; the LLM slot is held until the stream ends or is closed."""
        async with self._limit():
            stream = self._llm.stream_chat(messages, timeout=timeout)
            try:
                async for delta in stream:
                    yield delta
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()


def check_answer(answer: str, sources: Sequence[Evidence]) -> Checked:
    """Remove citations to no source; fix or drop the ones the source does not support."""
    report = check_citations(answer, [(n, s.text) for n, s in enumerate(sources, start=1)])
    return Checked(
        text=report.text,
        cited=list(report.cited),
        removed_citations=list(report.removed_citations),
        replaced=[{"from": old, "to": new} for old, new in report.replaced],
        added_citations=list(report.added),
    )
