"""One research run's execution: the phases in order, persisted as it goes, ended cleanly."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from orchestrator.core.ask.read import cancel_and_wait
from orchestrator.core.ask.state import Deps
from orchestrator.core.budget import Deadline
from orchestrator.core.errors import RunFailed
from orchestrator.core.events import API_VERSION
from orchestrator.core.exports.proxies import recording
from orchestrator.core.exports.recorder import Recorder
from orchestrator.core.llm import LLMError
from orchestrator.core.research.context import BudgetSpent, Ctx, ResearchLLM
from orchestrator.core.research.dimension import research_all
from orchestrator.core.research.events import EventLog
from orchestrator.core.research.phases import evaluate, review, scope
from orchestrator.core.research.state import ResearchState
from orchestrator.core.research.synthesis import synthesise
from orchestrator.core.store import RunRecord, StoredEvent

logger = logging.getLogger(__name__)


async def _phase(ctx: Ctx, name: str, step: Awaitable[None], round_: int | None = None) -> None:
    ctx.phase = name
    extra = {} if round_ is None else {"round": round_}
    ctx.emit("phase.started", {"phase": name, **extra})
    start = time.perf_counter()
    with ctx.timed(name):
        await step
    ms = round((time.perf_counter() - start) * 1000, 1)
    ctx.state.completed_phase = name
    ctx.emit("phase.completed", {"phase": name, **extra, "ms": ms})


async def pipeline(ctx: Ctx, continued: asyncio.Event) -> None:
    """The phases still to do, judged from the state (so a resume skips what is done)."""
    state = ctx.state
    if not state.scoped:
        await _phase(ctx, "scope", scope(ctx))
    if not state.reviewed:
        await _phase(ctx, "plan_review", review(ctx, continued))
    while True:
        round_ = len(state.evaluations) + 1
        if state.pending():
            await _phase(ctx, "research", research_all(ctx), round_)
        out_of_time = ctx.research_left() <= 0
        if state.evaluation_done or round_ > ctx.settings.research_max_evaluations or out_of_time:
            break
        try:
            async with asyncio.timeout(ctx.research_left()):
                await _phase(ctx, "evaluate", evaluate(ctx, round_), round_)
        except (BudgetSpent, TimeoutError):
            ctx.warn("budget_exhausted", "The run's budget ran out; writing from what was found.")
            break
        except LLMError as err:  # the findings are there: write the report from them
            ctx.warn("llm_unavailable", f"The coverage check failed ({err}); writing the report.")
            break
    await _phase(ctx, "synthesis", synthesise(ctx))


class RunSaver(Protocol):
    """Where a run saves its row and events (a ResearchStore, or a worker's leased view)."""

    async def save(self, run: RunRecord, events: Sequence[StoredEvent]) -> None:
        """Update the run's row and append ``events``, atomically."""
        ...


class ResearchRun:
    """A run being executed by this process; ``task`` runs ``execute``."""

    def __init__(
        self,
        record: RunRecord,
        deps: Deps,
        llm: ResearchLLM,
        store: RunSaver,
        *,
        earlier: str = "",
    ) -> None:
        self.record = record
        self.store = store
        self.state = ResearchState.model_validate(record.state)
        self.status = "running"
        self.log = EventLog(record.last_seq + 1, self._save)
        # Every call the run makes, for its bundle (bounded; a resume adds to the record).
        self.recorder = Recorder.decode(
            self.state.recording, deps.settings.bundle_max_bytes, lambda: self.ctx.phase
        )
        deps, llm = recording(deps, llm, self.recorder)
        self.ctx = Ctx(
            run_id=record.id,
            query=record.query,
            mode="due-diligence" if record.mode == "due-diligence" else "deep-research",
            state=self.state,
            log=self.log,
            deps=deps,
            llm=llm,
            deadline=Deadline(deps.settings.research_budget_s),
            earlier=earlier,
        )
        self.continued = asyncio.Event()
        self.cancel_requested = False
        # Set by a research worker that is stopping: the run goes back to the queue.
        self.requeue = False
        self.finished_at: float | None = None
        self.task: asyncio.Task[None] | None = None

    def snapshot(self, last_seq: int | None = None) -> RunRecord:
        """The run's row as it is now (``last_seq``: the newest event saved with it)."""
        return dataclasses.replace(
            self.record,
            status=self.status,
            phase=self.ctx.phase,
            state=self.state.model_dump(mode="json"),
            updated_at=time.time(),
            finished_at=self.finished_at,
            last_seq=self.log.persisted if last_seq is None else last_seq,
        )

    async def _save(self, events: Sequence[StoredEvent]) -> None:
        last = events[-1].seq if events else None
        await self.store.save(self.snapshot(last), events)

    def _state_event(self, first: bool = False) -> None:
        data: dict[str, Any] = {"status": self.status, "phase": self.ctx.phase}
        if first:
            data |= {
                "query": self.record.query,
                "mode": self.record.mode,
                "research_id": self.record.id,
                "api_version": API_VERSION,
            }
        self.ctx.emit("state", data)

    async def execute(self) -> None:
        """Run the remaining phases; whatever happens, the end is saved and announced."""
        started = time.perf_counter()
        flusher = asyncio.create_task(self.log.flush_loop())
        try:
            self._state_event(first=self.log.base_seq == 0)
            await pipeline(self.ctx, self.continued)
            self.status = "completed"
            counters = self.state.counters
            self.ctx.emit(
                "research.completed",
                {
                    "status": "completed",
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    "sources": counters.sources,
                    "iterations": counters.iterations,
                    "searches": counters.searches,
                    "llm_calls": counters.llm_calls,
                },
            )
        except asyncio.CancelledError:
            if self.cancel_requested:
                self.status = "cancelled"
                self.ctx.emit("research.cancelled", {"phase": self.ctx.phase})
            elif self.requeue:  # a worker is stopping: another takes the run over at once
                self.status = "queued"
                self._state_event()
            else:  # the orchestrator is stopping: resumable later
                self.status = "interrupted"
                self._state_event()
            raise
        except Exception as err:  # noqa: BLE001 - any failure ends the run as `failed`; _error logs bugs
            self.status = "failed"
            self.state.error = _error(err, self.record.id)
            self.ctx.emit("error", self.state.error)
        finally:
            self.finished_at = time.time()
            if self.recorder.max_bytes > 0:
                self.state.recording = self.recorder.encode()
            try:
                await cancel_and_wait(flusher)
                await self.log.flush()
            finally:  # readers must learn the run ended, even if the last save failed
                self.log.finish()


def _error(err: Exception, run_id: str) -> dict[str, str]:
    if isinstance(err, LLMError):
        message = str(err) if err.url in str(err) else f"{err} (LLM at {err.url})"
        return {"code": "llm_unavailable", "message": message}
    if isinstance(err, RunFailed):
        return {"code": err.code, "message": err.message}
    if isinstance(err, TimeoutError):
        return {"code": "budget_exhausted", "message": "The run's time budget ran out."}
    if isinstance(err, BudgetSpent):
        return {"code": "budget_exhausted", "message": f"The run has used {err}."}
    logger.error("research run failed", exc_info=err, extra={"research_id": run_id})
    return {"code": "internal", "message": "The run failed unexpectedly."}
