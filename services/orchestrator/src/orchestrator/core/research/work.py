"""Research runs on workers: the worker side (``python -m orchestrator.worker`` runs it).

A worker claims queued runs from the shared database, at most ``ORCHESTRATOR_RESEARCH_MAX_INFLIGHT``
at once, and executes each with the same ResearchRun the single-process default uses. It holds
each run by a lease it renews every third of ``ORCHESTRATOR_RESEARCH_LEASE_S``; every save is
refused once another worker holds the run (LeaseLost), so a worker presumed dead cannot write
over the one that took its run over. A worker that dies simply stops renewing: after the lease
another worker claims the run and resumes it from its last saved state (the events readers saw
were all saved, so none is numbered twice). A worker told to stop saves its runs and hands
them back to the queue at once.

Control requests (cancel, end the plan review) arrive in the run's row, with a NOTIFY that wakes
the holder at once; the renewal takes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
from collections.abc import Sequence

from orchestrator.core.ask.state import Deps
from orchestrator.core.research.context import ResearchLLM
from orchestrator.core.research.manager import add_turn, end_review
from orchestrator.core.research.runner import ResearchRun
from orchestrator.core.sessions import SessionStore
from orchestrator.core.store import (
    CONTROL_CHANNEL,
    QUEUE_CHANNEL,
    LeaseLost,
    RunQueue,
    RunRecord,
    StoredEvent,
    Wakeups,
)

logger = logging.getLogger(__name__)

EARLIER_CHARS = 2000


class LeasedSaver:
    """A run's saves on behalf of the worker holding it."""

    def __init__(self, queue: RunQueue, holder: str) -> None:
        self._queue = queue
        self._holder = holder
        self.lost = False

    async def save(self, run: RunRecord, events: Sequence[StoredEvent]) -> None:
        """Save as the holder; a run handed back by the worker's stop goes back to the queue.

        Raises:
            LeaseLost: another worker holds the run now.
        """
        if self.lost:
            raise LeaseLost(run.id)
        if run.status == "queued":  # handed back (ResearchRun.requeue): release the lease
            run = dataclasses.replace(run, finished_at=None, lease_owner=None)
        try:
            await self._queue.save_as(run, events, self._holder)
        except LeaseLost:
            self.lost = True
            raise


class ResearchWorker:
    """Claims and executes research runs until cancelled."""

    def __init__(
        self,
        queue: RunQueue,
        wakeups: Wakeups,
        deps: Deps,
        llm: ResearchLLM,
        sessions: SessionStore,
        worker_id: str,
    ) -> None:
        self.queue = queue
        self.id = worker_id
        self._wakeups = wakeups
        self._deps = deps
        self._llm = llm
        self._sessions = sessions
        settings = deps.settings
        self.capacity = settings.research_max_inflight
        self.lease_s = settings.research_lease_s
        self.held: dict[str, asyncio.Task[None]] = {}
        self._freed = asyncio.Event()

    async def run(self) -> None:
        """Claim runs whenever there is room; on cancellation, hand the held runs back."""
        try:
            while True:
                token = self._wakeups.token(QUEUE_CHANNEL, "")
                await self._claim_while_room()
                # Woken by a queued run or a finished one of ours; else look again every third
                # of a lease, for runs whose worker went away.
                waiter = asyncio.ensure_future(
                    self._wakeups.wait(QUEUE_CHANNEL, "", token, self.lease_s / 3)
                )
                freed = asyncio.ensure_future(self._freed.wait())
                try:
                    await asyncio.wait([waiter, freed], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
                    freed.cancel()
                self._freed.clear()
        finally:
            tasks = list(self.held.values())
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks)

    async def _claim_while_room(self) -> None:
        while len(self.held) < self.capacity:
            try:
                record = await self.queue.claim(self.id, self.lease_s)
            except Exception:
                logger.warning("claiming a research run failed", exc_info=True)
                return
            if record is None:
                return
            logger.info("research run claimed", extra={"research_id": record.id})
            task = asyncio.create_task(self._hold(record), name=f"hold-{record.id}")
            self.held[record.id] = task
            task.add_done_callback(functools.partial(self._release, record.id))

    def _release(self, run_id: str, _task: object = None) -> None:
        self.held.pop(run_id, None)
        self._freed.set()

    async def _earlier(self, record: RunRecord) -> str:
        if not record.session_id:
            return ""
        session = await self._sessions.get(record.owner, record.session_id)
        if session is None or not session.turns:
            return ""
        turn = session.turns[-1]
        return f"Question: {turn.question}\n{turn.answer}"[:EARLIER_CHARS]

    async def _hold(self, record: RunRecord) -> None:
        saver = LeasedSaver(self.queue, self.id)
        record = dataclasses.replace(record, lease_owner=self.id)
        earlier = await self._earlier(record)
        run = ResearchRun(record, self._deps, self._llm, saver, earlier=earlier)
        task = asyncio.create_task(self._execute(run), name=f"research-{record.id}")
        run.task = task
        try:
            await self._renew_until_done(run, task, saver)
        except asyncio.CancelledError:
            run.requeue = True  # the worker is stopping: save, and queue the run again
            task.cancel()
            await asyncio.wait([task])
            raise
        if run.status == "completed" and record.session_id:
            await add_turn(self._sessions, run)

    async def _execute(self, run: ResearchRun) -> None:
        try:
            await run.execute()
        except LeaseLost:
            logger.warning(
                "research run taken over by another worker", extra={"research_id": run.record.id}
            )
        except Exception:
            logger.exception("research run ended badly", extra={"research_id": run.record.id})

    async def _renew_until_done(
        self, run: ResearchRun, task: asyncio.Task[None], saver: LeasedSaver
    ) -> None:
        run_id = run.record.id
        while not task.done():
            token = self._wakeups.token(CONTROL_CHANNEL, run_id)
            try:
                control = await self.queue.renew(run_id, self.id, self.lease_s)
            except LeaseLost:
                saver.lost = True
                task.cancel()
                break
            except Exception:
                logger.warning("renewing a research lease failed", exc_info=True)
                control = None
            if control:
                self._apply(run, control)
            waiter = asyncio.ensure_future(
                self._wakeups.wait(CONTROL_CHANNEL, run_id, token, self.lease_s / 3)
            )
            try:
                await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        await asyncio.wait([task])

    @staticmethod
    def _apply(run: ResearchRun, control: str) -> None:
        if control == "cancel":
            run.cancel_requested = True
            if run.task is not None:
                run.task.cancel()
            return
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            dims = json.loads(control).get("continue")
            if run.ctx.phase == "plan_review" and not run.state.reviewed:
                end_review(run, [str(d) for d in dims] if dims else None)
