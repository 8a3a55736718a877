"""The research runs as one principal sees them (what every API surface uses): the manager's
calls with the caller bound in, so no route, tool or completion can forget the owner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from orchestrator.core.domains import DomainPolicy
from orchestrator.core.errors import ResearchNotFound
from orchestrator.core.principals import NotVisible, Principal, listed_owner
from orchestrator.core.research.state import ResearchState
from orchestrator.core.store import RunRecord, StoredEvent

if TYPE_CHECKING:
    from orchestrator.core.research.manager import ResearchManager


class OwnedRuns:
    """The research runs as one principal sees them: its own (an admin: everyone's). The same
    calls as the manager's, with the caller bound in, so no route can forget the owner."""

    def __init__(self, manager: ResearchManager, who: Principal) -> None:
        self._manager = manager
        self.who = who

    @property
    def heartbeat_s(self) -> float:
        """Seconds of silence before an event stream sends a heartbeat comment."""
        return self._manager.heartbeat_s

    async def create(
        self,
        query: str,
        mode: str,
        session_id: str | None,
        sources: Sequence[str],
        *,
        domains: DomainPolicy | None = None,
    ) -> RunRecord:
        """Start a run owned by the caller (see ResearchManager.create)."""
        return await self._manager.create(
            query, mode, session_id, sources, self.who.id, domains=domains
        )

    async def list_runs(
        self, limit: int, offset: int, owner: str | None = None
    ) -> tuple[list[RunRecord], int]:
        """The caller's runs; an admin may ask for ``owner``'s, or ``*`` for everyone's.

        Raises:
            ResearchNotFound: a user asked for another owner's runs.
        """
        try:
            shown = listed_owner(self.who, owner)
        except NotVisible:
            raise ResearchNotFound(f"No research runs of owner {owner!r}.") from None
        return await self._manager.list_runs(limit, offset, shown)

    async def record(self, run_id: str) -> tuple[RunRecord, ResearchState]:
        """See ResearchManager.record."""
        return await self._manager.record(run_id, self.who)

    async def cancel(self, run_id: str) -> tuple[RunRecord, ResearchState]:
        """See ResearchManager.cancel."""
        return await self._manager.cancel(run_id, self.who)

    async def continue_(
        self, run_id: str, dimensions: list[str] | None
    ) -> tuple[RunRecord, ResearchState]:
        """See ResearchManager.continue_."""
        return await self._manager.continue_(run_id, dimensions, self.who)

    async def resume(self, run_id: str) -> tuple[RunRecord, ResearchState]:
        """See ResearchManager.resume."""
        return await self._manager.resume(run_id, self.who)

    def follow(
        self, run_id: str, after: int, heartbeat_s: float
    ) -> AsyncIterator[StoredEvent | None]:
        """See ResearchManager.follow."""
        return self._manager.follow(run_id, after, heartbeat_s, self.who)
