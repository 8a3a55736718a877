"""The Brain the loop uses in production: prompts + structured calls + citation checks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Literal, TypeVar

from pydantic import BaseModel

from orchestrator.agent.domain import Evidence
from orchestrator.agent.ports import Checked, Decision
from orchestrator.citations import check_citations
from orchestrator.config import Settings
from orchestrator.llm.base import LLMClient, Message
from orchestrator.prompts import judge_messages, plan_messages, synthesis_messages
from orchestrator.schemas import Judgement, Plan
from orchestrator.sessions import Turn
from orchestrator.structured import default_judgement, default_plan, structured_call

M = TypeVar("M", bound=BaseModel)


def _today() -> datetime:
    return datetime.now(UTC)


class LLMBrain:
    """Plans, judges and answers with one LLM; at most ``limit`` calls in flight process-wide."""

    def __init__(self, llm: LLMClient, settings: Settings, limit: asyncio.Semaphore) -> None:
        self._llm = llm
        self._settings = settings
        self._limit = limit

    @property
    def llm_url(self) -> str:
        """The LLM server's base URL."""
        return self._llm.base_url

    async def plan(
        self, question: str, history: Sequence[Turn], *, timeout: float
    ) -> Decision[Plan]:
        """Clarify, answer from history, or search with an optimised query."""
        messages = plan_messages(question, history, today=_today().date())
        async with self._limit:
            result = await structured_call(
                self._llm, messages, Plan, default_plan(), timeout=timeout
            )
        return Decision(result.value, result.used_default, result.attempts)

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
        async with self._limit:
            result = await structured_call(
                self._llm, messages, Judgement, default_judgement(), timeout=timeout
            )
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
        """Stream the answer; the semaphore is held until the stream ends or is closed."""
        messages = synthesis_messages(
            question, sources, history, today=_today().date(), boundary=boundary, detail=detail
        )
        async with self._limit:
            stream = self._llm.stream_chat(messages, timeout=timeout)
            try:
                async for delta in stream:
                    yield delta
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()

    def check(self, answer: str, sources: Sequence[Evidence]) -> Checked:
        """Remove citations to no source; fix or drop the ones the source does not support."""
        report = check_citations(answer, [(n, s.text) for n, s in enumerate(sources, start=1)])
        return Checked(
            text=report.text,
            cited=list(report.cited),
            removed_citations=list(report.removed_citations),
            replaced=[{"from": old, "to": new} for old, new in report.replaced],
            added_citations=list(report.added),
        )

    # --- generic calls for other pipelines (deep research), under the same LLM limit ---

    async def structured(
        self, messages: list[Message], model_cls: type[M], default: M, *, timeout: float
    ) -> Decision[M]:
        """One validated structured call (repaired once, then ``default``)."""
        async with self._limit:
            result = await structured_call(self._llm, messages, model_cls, default, timeout=timeout)
        return Decision(result.value, result.used_default, result.attempts)

    async def stream(self, messages: list[Message], *, timeout: float) -> AsyncIterator[str]:
        """Stream a free-text reply; the semaphore is held until the stream ends or is closed."""
        async with self._limit:
            stream = self._llm.stream_chat(messages, timeout=timeout)
            try:
                async for delta in stream:
                    yield delta
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()
