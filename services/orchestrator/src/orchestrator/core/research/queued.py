"""Research runs on workers: the API side. Runs are rows in the shared database's queue;
research workers (core/research/work.py) execute them. This process only admits, reads, follows and
controls them, so any API replica serves any run wherever it executes.

The same calls as ResearchManager (the API reaches both through OwnedRuns), with:

- ``create`` and ``resume`` queue the run (admitted against the cap counted across replicas);
- ``follow`` replays the run's saved events and wakes on the database's NOTIFY after each save,
  so a client on any replica, resuming with ``Last-Event-ID``, gets every event once;
- ``cancel`` and ``continue_`` leave a control request in the run's row and NOTIFY the worker
  holding it (``cancel`` then waits for the worker to save the end).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Sequence

from orchestrator.core.ask.state import Deps
from orchestrator.core.domains import DomainPolicy
from orchestrator.core.errors import ResearchConflict, TooManyResearchRuns
from orchestrator.core.principals import Principal
from orchestrator.core.research.context import ResearchLLM
from orchestrator.core.research.manager import RESUMABLE, RETRY_AFTER_S, ResearchManager
from orchestrator.core.research.state import FINISHED, ResearchState
from orchestrator.core.sessions import SessionStore
from orchestrator.core.store import EVENTS_CHANNEL, RunQueue, RunRecord, StoredEvent, Wakeups

# How long DELETE waits for the worker to save the cancelled run (beyond that the response
# shows it still running; the cancel stays requested and the worker ends it).
CANCEL_WAIT_S = 10.0


class QueuedResearchManager(ResearchManager):
    """The research runs of every replica, executed by workers."""

    def __init__(
        self,
        queue: RunQueue,
        deps: Deps,
        llm: ResearchLLM,
        sessions: SessionStore,
        wakeups: Wakeups,
    ) -> None:
        super().__init__(queue, deps, llm, sessions)
        self.queue = queue
        self._wakeups = wakeups

    async def start(self) -> None:
        """Start the TTL sweeper. Runs left running are not touched: their workers hold them,
        or another worker takes them over when the lease runs out."""
        if self._settings.research_ttl_s > 0:
            self._sweeper = asyncio.create_task(self._sweep())

    def _full(self) -> TooManyResearchRuns:
        cap = self._settings.research_cluster_max
        return TooManyResearchRuns(
            f"{cap} research runs are already queued or running; try again later.",
            retry_after_s=RETRY_AFTER_S,
        )

    async def create(
        self,
        query: str,
        mode: str,
        session_id: str | None,
        sources: Sequence[str],
        owner: str,
        *,
        domains: DomainPolicy | None = None,
    ) -> RunRecord:
        """Queue a new run owned by ``owner``.

        Raises:
            SearchOff: nothing is left to search.
            TooManyResearchRuns: the cap across replicas is reached.
        """
        record = self.new_record(query, mode, session_id, sources, owner, "queued", domains=domains)
        if not await self.queue.admit(record, self._settings.research_cluster_max):
            raise self._full()
        return record

    async def cancel(self, run_id: str, who: Principal) -> tuple[RunRecord, ResearchState]:
        """Cancel a queued or running run, wherever it runs.

        Raises:
            ResearchNotFound: no such run (for ``who``).
            ResearchConflict: the run is neither queued nor running.
        """
        record, _ = await self.record(run_id, who)
        if record.status == "queued":
            event = StoredEvent(record.last_seq + 1, "research.cancelled", {"phase": None})
            if await self.queue.cancel_queued(record, event):
                return await self.record(run_id, who)
            record, _ = await self.record(run_id, who)  # a worker claimed it meanwhile
        if record.status != "running" or not await self.queue.request(run_id, "cancel"):
            raise ResearchConflict(
                f"The run is {record.status}; only a running run can be cancelled."
            )
        return await self._until_finished(run_id, who, CANCEL_WAIT_S)

    async def _until_finished(
        self, run_id: str, who: Principal, within: float
    ) -> tuple[RunRecord, ResearchState]:
        deadline = time.monotonic() + within
        while True:
            token = self._wakeups.token(EVENTS_CHANNEL, run_id)
            record, state = await self.record(run_id, who)
            left = deadline - time.monotonic()
            if record.status in FINISHED or left <= 0:
                return record, state
            await self._wakeups.wait(EVENTS_CHANNEL, run_id, token, left)

    async def continue_(
        self, run_id: str, dimensions: list[str] | None, who: Principal
    ) -> tuple[RunRecord, ResearchState]:
        """Ask the run's worker to end the plan review (with the client's dimensions).

        Raises:
            ResearchNotFound: no such run (for ``who``).
            ResearchConflict: the run is not in its plan review.
        """
        record, state = await self.record(run_id, who)
        in_review = record.status == "running" and record.phase == "plan_review"
        control = json.dumps({"continue": dimensions or None})
        if not in_review or state.reviewed or not await self.queue.request(run_id, control):
            raise ResearchConflict("The run is not in its plan review.")
        return record, state

    async def resume(self, run_id: str, who: Principal) -> tuple[RunRecord, ResearchState]:
        """Queue an interrupted or failed run again; a worker resumes it from its last
        completed phase (the run stays its owner's).

        Raises:
            ResearchNotFound: no such run (for ``who``).
            ResearchConflict: the run is not interrupted or failed.
            TooManyResearchRuns: the cap across replicas is reached.
        """
        record, state = await self.record(run_id, who)
        if record.status not in RESUMABLE:
            raise ResearchConflict(
                f"The run is {record.status}; only an interrupted or failed run resumes."
            )
        if await self.queue.in_flight() >= self._settings.research_cluster_max:
            raise self._full()
        state.error = None
        again = dataclasses.replace(record, state=state.model_dump(mode="json"))
        if not await self.queue.requeue(again):
            raise ResearchConflict("The run is running.")
        return await self.record(run_id, who)

    async def follow(
        self, run_id: str, after: int, heartbeat_s: float, who: Principal
    ) -> AsyncIterator[StoredEvent | None]:
        """The run's events after ``after`` as they are saved, by whichever worker; None after
        ``heartbeat_s`` of silence. Ends after the run's last event.

        Raises:
            ResearchNotFound: no such run (for ``who``).
        """
        await self.record(run_id, who)
        while True:
            token = self._wakeups.token(EVENTS_CHANNEL, run_id)
            # The row first: a run that has ended saved its last events in the same
            # transaction as its status, so the read after it finds all of them.
            row = await self.store.get_run(run_id)
            async for event in self._replay(run_id, after, None):
                yield event
                after = event.seq
            if row is None or (row.status in FINISHED and after >= row.last_seq):
                return
            if not await self._wakeups.wait(EVENTS_CHANNEL, run_id, token, heartbeat_s):
                yield None
