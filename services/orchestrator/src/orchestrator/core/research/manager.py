"""The research runs of this process: start, follow, continue, cancel, resume, expire.

At start, runs a previous process left ``running`` are marked ``interrupted`` (with a `state`
event, so a client reconnecting learns it); at stop, the live runs are interrupted the same way.

Every run has an owner (orchestrator/core/principals.py). The API reaches runs only through
``OwnedRuns``, bound to the caller: another principal's run is "not found", exactly like a run
that does not exist, and the live runs are keyed by (owner, id).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import AsyncIterator, Sequence

from orchestrator.core.ask.state import Deps
from orchestrator.core.domains import DomainPolicy
from orchestrator.core.errors import ResearchConflict, ResearchNotFound, TooManyResearchRuns
from orchestrator.core.policy import research_sources
from orchestrator.core.principals import Principal
from orchestrator.core.research.context import ResearchLLM
from orchestrator.core.research.owned import OwnedRuns
from orchestrator.core.research.phases import dimension_list, replace_dimensions
from orchestrator.core.research.runner import ResearchRun
from orchestrator.core.research.state import ResearchState
from orchestrator.core.research.views import compacted
from orchestrator.core.sessions import SessionStore, Turn
from orchestrator.core.store import ResearchStore, RunRecord, StoredEvent

logger = logging.getLogger(__name__)

# What a client at the cap is told to wait: about one phase of a run on a small model.
RETRY_AFTER_S = 30
EVENT_PAGE = 500
EARLIER_CHARS = 2000
RESUMABLE = frozenset({"interrupted", "failed"})
#: A live run's key: (owner, run id).
Key = tuple[str, str]


def _not_found(run_id: str) -> ResearchNotFound:
    # One message for "never existed", "expired" and "someone else's": nothing to tell apart.
    return ResearchNotFound(f"No research run {run_id!r} (it may have expired).")


async def add_turn(sessions: SessionStore, run: ResearchRun) -> None:
    """A completed run's report as its session's next turn."""
    session_id = run.record.session_id or ""
    sources = tuple(s.public() for s in run.state.sources)
    turn = Turn(
        run.record.query,
        compacted(run.record.query, run.state),
        sources,
        "answered",
        time.time(),
    )
    async with sessions.use(run.record.owner, session_id) as session:
        # a conversation a run started is listed as research (GET /v1/sessions)
        await sessions.add_turn(session, turn, kind="research")


def end_review(run: ResearchRun, dimensions: list[str] | None) -> None:
    """End a run's plan review now, with the client's dimensions when it sent some."""
    if dimensions:
        replace_dimensions(run.state, dimensions)
        run.ctx.emit(
            "scope.completed",
            {
                "brief": run.state.brief,
                "dimensions": dimension_list(run.state),
                "used_default": False,
                "review_s": 0,
                "edited": True,
            },
        )
    run.continued.set()


class ResearchManager:
    """Owns the live runs and the store; one per app."""

    def __init__(
        self, store: ResearchStore, deps: Deps, llm: ResearchLLM, sessions: SessionStore
    ) -> None:
        self.store = store
        self._deps = deps
        self._llm = llm
        self._sessions = sessions
        self._settings = deps.settings
        self._live: dict[Key, ResearchRun] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._starting = 0  # runs admitted but not yet live (their row is being written)
        self._resuming: set[Key] = set()

    async def start(self) -> None:
        """Mark runs left running by a previous process; start the TTL sweeper."""
        for record in await self.store.runs_with_status("running"):
            now = time.time()
            seq = record.last_seq + 1
            event = StoredEvent(seq, "state", {"status": "interrupted", "phase": record.phase})
            marked = dataclasses.replace(
                record, status="interrupted", updated_at=now, finished_at=now, last_seq=seq
            )
            await self.store.save(marked, [event])
            logger.info("research run interrupted by a restart", extra={"research_id": record.id})
        if self._settings.research_ttl_s > 0:
            self._sweeper = asyncio.create_task(self._sweep())

    async def aclose(self) -> None:
        """Interrupt the live runs (each saves its state) and stop the sweeper."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if self._sweeper is not None:
            self._sweeper.cancel()
            tasks.append(self._sweeper)
        if tasks:
            await asyncio.wait(tasks)

    async def _sweep(self) -> None:
        ttl = self._settings.research_ttl_s
        while True:
            await asyncio.sleep(min(60.0, max(ttl / 2, 0.05)))
            try:
                removed = await self.store.expire(time.time() - ttl)
            except Exception:
                logger.exception("expiring research runs failed")
                continue
            if removed:
                logger.info("research runs expired", extra={"count": removed})

    def _admit(self) -> None:
        cap = self._settings.research_max_inflight
        if len(self._live) + self._starting >= cap:
            raise TooManyResearchRuns(
                f"{cap} research runs are already in flight; try again later.",
                retry_after_s=RETRY_AFTER_S,
            )

    def _expired(self, record: RunRecord) -> bool:
        ttl = self._settings.research_ttl_s
        return bool(ttl and record.finished_at and record.finished_at < time.time() - ttl)

    def for_(self, who: Principal) -> OwnedRuns:
        """The runs as ``who`` sees them (what the API uses)."""
        return OwnedRuns(self, who)

    def _find_live(self, run_id: str, who: Principal) -> ResearchRun | None:
        if not who.admin:
            return self._live.get((who.id, run_id))
        # An admin's lookup scans the live runs: at most the in-flight cap of them.
        return next((r for (_, rid), r in list(self._live.items()) if rid == run_id), None)

    async def record(self, run_id: str, who: Principal) -> tuple[RunRecord, ResearchState]:
        """The run as it is now (live or stored).

        Raises:
            ResearchNotFound: no such run, it expired, or ``who`` may not see it.
        """
        live = self._find_live(run_id, who)
        if live is not None:
            return live.snapshot(), live.state
        stored = await self.store.get_run(run_id)
        if stored is None or self._expired(stored) or not who.may_see(stored.owner):
            raise _not_found(run_id)
        return stored, ResearchState.model_validate(stored.state)

    async def list_runs(
        self, limit: int, offset: int, owner: str | None
    ) -> tuple[list[RunRecord], int]:
        """A page of the owner's runs (everyone's for None), newest first (live ones as they
        are now)."""
        records, total = await self.store.list_runs(limit, offset, owner)
        out = []
        for r in records:
            live = self._live.get((r.owner, r.id))
            out.append(live.snapshot() if live is not None else r)
        return out, total

    def _earlier(self, owner: str, session_id: str | None) -> str:
        # Sessions in use are in memory; one only on disk gives no earlier context.
        session = self._sessions.cached(owner, session_id) if session_id else None
        if session is None or not session.turns:
            return ""
        turn = session.turns[-1]
        return f"Question: {turn.question}\n{turn.answer}"[:EARLIER_CHARS]

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
        """Store and start a new run owned by ``owner``.

        Raises:
            SearchOff: nothing is left to search (web search off, no local documents).
            TooManyResearchRuns: the in-flight cap is reached.
        """
        record = self.new_record(
            query, mode, session_id, sources, owner, "running", domains=domains
        )
        self._admit()
        self._starting += 1
        try:
            await self.store.create_run(record)
        finally:
            self._starting -= 1
        self._launch(record)
        return record

    def new_record(
        self,
        query: str,
        mode: str,
        session_id: str | None,
        sources: Sequence[str],
        owner: str,
        status: str,
        *,
        domains: DomainPolicy | None = None,
    ) -> RunRecord:
        """A new run's row (not stored yet)."""
        # The entry points asked the policy already; asking again costs nothing and keeps a
        # future entry point that forgot from starting a run that reaches the web.
        sources = research_sources(sources, self._settings)
        now = time.time()
        state = ResearchState(sources_opt=list(sources))
        if domains is not None:  # the server's lists are read again whenever the run executes
            state.domains_opt = domains.request_rules()
        return RunRecord(
            id=uuid.uuid4().hex,
            query=query,
            mode=mode,
            status=status,
            phase=None,
            session_id=session_id,
            state=state.model_dump(mode="json"),
            created_at=now,
            updated_at=now,
            owner=owner,
        )

    def _launch(self, record: RunRecord) -> None:
        earlier = self._earlier(record.owner, record.session_id)
        run = ResearchRun(record, self._deps, self._llm, self.store, earlier=earlier)
        self._live[(record.owner, record.id)] = run
        task = asyncio.create_task(self._execute(run), name=f"research-{record.id}")
        run.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _execute(self, run: ResearchRun) -> None:
        try:
            await run.execute()
        except Exception:
            logger.exception("research run ended badly", extra={"research_id": run.record.id})
        finally:
            key = (run.record.owner, run.record.id)
            if self._live.get(key) is run:
                del self._live[key]
        if run.status == "completed" and run.record.session_id:
            await self._add_turn(run)

    async def _add_turn(self, run: ResearchRun) -> None:
        await add_turn(self._sessions, run)

    @property
    def heartbeat_s(self) -> float:
        """Seconds of silence before an event stream sends a heartbeat comment."""
        return self._settings.research_heartbeat_s

    async def cancel(self, run_id: str, who: Principal) -> tuple[RunRecord, ResearchState]:
        """Stop a live run; its partial report stays.

        Raises:
            ResearchNotFound: no such run (for ``who``).
            ResearchConflict: the run is not running.
        """
        run = self._find_live(run_id, who)
        if run is None or run.task is None:
            record, _ = await self.record(run_id, who)
            raise ResearchConflict(
                f"The run is {record.status}; only a running run can be cancelled."
            )
        run.cancel_requested = True
        run.task.cancel()
        await asyncio.wait([run.task])
        return run.snapshot(), run.state

    async def continue_(
        self, run_id: str, dimensions: list[str] | None, who: Principal
    ) -> tuple[RunRecord, ResearchState]:
        """End the plan review now, optionally with the client's dimensions.

        Raises:
            ResearchNotFound: no such run (for ``who``).
            ResearchConflict: the run is not in its plan review.
        """
        run = self._find_live(run_id, who)
        if run is None or run.ctx.phase != "plan_review" or run.state.reviewed:
            await self.record(run_id, who)
            raise ResearchConflict("The run is not in its plan review.")
        end_review(run, dimensions)
        return run.snapshot(), run.state

    async def resume(self, run_id: str, who: Principal) -> tuple[RunRecord, ResearchState]:
        """Restart an interrupted or failed run from its last completed phase (an admin's
        resume keeps the run its owner's).

        Raises:
            ResearchNotFound: no such run (for ``who``).
            ResearchConflict: the run is not interrupted or failed.
            TooManyResearchRuns: the in-flight cap is reached.
        """
        record, state = await self.record(run_id, who)
        key = (record.owner, run_id)
        if key in self._live or key in self._resuming:
            raise ResearchConflict("The run is running.")
        if record.status not in RESUMABLE:
            raise ResearchConflict(
                f"The run is {record.status}; only an interrupted or failed run resumes."
            )
        self._admit()
        state.error = None
        resumed = dataclasses.replace(
            record, status="running", finished_at=None, state=state.model_dump(mode="json")
        )
        self._starting += 1
        self._resuming.add(key)
        try:  # running again at once: the TTL sweeper must not take it meanwhile
            await self.store.save(resumed, [])
        finally:
            self._starting -= 1
            self._resuming.discard(key)
        self._launch(resumed)
        run = self._live[key]
        return run.snapshot(), run.state

    async def follow(
        self, run_id: str, after: int, heartbeat_s: float, who: Principal
    ) -> AsyncIterator[StoredEvent | None]:
        """The run's events after ``after``: stored ones, then live ones as they are saved.

        Yields None when nothing happened for ``heartbeat_s``. Ends after the run's last event.

        Raises:
            ResearchNotFound: no such run (for ``who``).
        """
        run = self._find_live(run_id, who)
        if run is None:
            await self.record(run_id, who)
            async for event in self._replay(run_id, after, None):
                yield event
            return
        log = run.log
        if after + 1 < log.base_seq:
            async for event in self._replay(run_id, after, log.base_seq - 1):
                yield event
            after = log.base_seq - 1
        while True:
            token = log.token()
            for event in log.readable_after(after):
                yield event
                after = event.seq
            if log.done_after(after):
                return
            if not await log.wait(token, heartbeat_s):
                yield None

    async def _replay(
        self, run_id: str, after: int, upto: int | None
    ) -> AsyncIterator[StoredEvent]:
        while True:
            page = await self.store.events_after(run_id, after, EVENT_PAGE)
            for event in page:
                if upto is not None and event.seq > upto:
                    return
                yield event
                after = event.seq
            if len(page) < EVENT_PAGE:
                return
