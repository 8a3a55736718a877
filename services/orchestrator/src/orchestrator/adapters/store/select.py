"""The one place the engine is chosen: PostgreSQL when ``ORCHESTRATOR_DATABASE_URL`` is set, else
the SQLite file in ``ORCHESTRATOR_DATA_DIR`` (in memory without one). psycopg is imported only
for PostgreSQL, so the single-process default loads nothing new."""

from __future__ import annotations

from typing import Protocol

from orchestrator.config import Settings
from orchestrator.core.sessions import Session, SessionDB, SessionStore
from orchestrator.core.store import ResearchStore


class ClosableSessionDB(SessionDB, Protocol):
    """A session database the runtime closes at shutdown."""

    async def close(self) -> None:
        """Release the database."""
        ...


class SharedSessionStore(SessionStore):
    """Sessions in a database other replicas write too: a session not in use in this process
    is read again at its next use (another replica may have added turns since), so memory
    holds only the sessions being answered here, and requests here on one session still share
    its lock. Two replicas answering one session at the same instant: the later save wins.
    """

    def cached(self, owner: str, session_id: str) -> Session | None:
        """The owner's session if a request in this process is using it now, else None."""
        session = super().cached(owner, session_id)
        if session is not None and session.users == 0:
            self._sessions.pop(session.key, None)
            return None
        return session


def shared(settings: Settings) -> bool:
    """True when the stores are shared with other processes (PostgreSQL)."""
    return bool(settings.database_url)


async def open_session_db(settings: Settings) -> ClosableSessionDB | None:
    """Where sessions outlive the process; None keeps them in memory only."""
    if settings.database_url:
        from orchestrator.adapters.store.pg_sessions import PgSessionDB

        return await PgSessionDB.open(settings.database_url, settings.database_pool_max)
    if settings.data_dir:
        from orchestrator.adapters.store.session_db import SqliteSessionDB

        return await SqliteSessionDB.open(settings.data_dir)
    return None


async def open_research_store(settings: Settings) -> ResearchStore:
    """The research runs' store."""
    if settings.database_url:
        from orchestrator.adapters.store.pg import PgStore

        return await PgStore.open(settings.database_url, settings.database_pool_max)
    from orchestrator.adapters.store.sqlite import SqliteStore

    return await SqliteStore.open(settings.data_dir)
