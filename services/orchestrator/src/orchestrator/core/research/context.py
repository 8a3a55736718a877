"""What every research step shares: the run's state, its event log, the LLM and the budgets."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from orchestrator.config import Settings
from orchestrator.core.ask.ports import Decision
from orchestrator.core.ask.state import Deps
from orchestrator.core.budget import Deadline
from orchestrator.core.llm import Message
from orchestrator.core.research.events import EventLog
from orchestrator.core.research.state import Mode, ResearchState

M = TypeVar("M", bound=BaseModel)

INVALID_OUTPUT = "The LLM gave no valid structured output after a retry; a safe default was used."


class ResearchLLM(Protocol):
    """The generic LLM calls research makes (the production Brain has them)."""

    async def structured(
        self, messages: list[Message], model_cls: type[M], default: M, *, timeout: float
    ) -> Decision[M]:
        """A validated structured call: repaired once, then ``default``."""
        ...

    def stream(self, messages: list[Message], *, timeout: float) -> AsyncIterator[str]:
        """A streamed free-text reply."""
        ...


class BudgetSpent(Exception):
    """One of the run's budgets (searches, LLM calls) is used up."""


@dataclass
class Ctx:
    """One execution of a run (a resume gets a new one, with a fresh time budget)."""

    run_id: str
    query: str
    mode: Mode
    state: ResearchState
    log: EventLog
    deps: Deps
    llm: ResearchLLM
    deadline: Deadline
    earlier: str = ""
    phase: str | None = None
    _warned: set[str] = field(default_factory=set)

    @property
    def settings(self) -> Settings:
        """The app's settings."""
        return self.deps.settings

    def research_left(self) -> float:
        """Seconds left for research, keeping the synthesis reserve."""
        return self.deadline.remaining(self.settings.synthesis_reserve_s)

    def emit(self, type_: str, data: dict[str, Any]) -> None:
        """Emit a run event."""
        self.log.emit(type_, data)

    def warn(self, code: str, message: str, **extra: Any) -> None:
        """A `warning` (once per code and dimension or section), also kept in the state."""
        key = f"{code}:{sorted(extra.items())}"
        if key in self._warned:
            return
        self._warned.add(key)
        data = {"code": code, "message": message, **extra}
        self.state.warnings.append(data)
        self.emit("warning", data)

    def counters(self) -> None:
        """Emit the counters."""
        self.emit("counters.update", self.state.counters.model_dump())

    def spend_llm_call(self) -> None:
        """Count one research LLM call.

        Raises:
            BudgetSpent: the run's LLM calls are used up.
        """
        counters = self.state.counters
        if counters.llm_calls >= self.settings.research_max_llm_calls:
            raise BudgetSpent(f"the {self.settings.research_max_llm_calls} LLM calls")
        counters.llm_calls += 1

    def spend_searches(self, count: int) -> None:
        """Count ``count`` searches.

        Raises:
            BudgetSpent: they would exceed the run's search budget.
        """
        counters = self.state.counters
        if counters.searches + count > self.settings.research_max_searches:
            raise BudgetSpent(f"the {self.settings.research_max_searches} searches")
        counters.searches += count

    async def structured(
        self, messages: list[Message], model_cls: type[M], default: M, **extra: Any
    ) -> Decision[M]:
        """A counted structured call; a `warning` when it fell back to ``default``."""
        self.spend_llm_call()
        decision = await self.llm.structured(
            messages, model_cls, default, timeout=max(self.research_left(), 0.001)
        )
        if decision.used_default:
            self.warn("llm_invalid_output", INVALID_OUTPUT, **extra)
        return decision

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Add the block's wall time to ``timings_ms[name]``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            ms = (time.perf_counter() - start) * 1000
            timings = self.state.timings_ms
            timings[name] = round(timings.get(name, 0.0) + ms, 1)
