"""Conversation sessions: in memory, with a TTL, a size budget and one lock per session."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Turn:
    """One question and what the engine answered, with the numbered sources it used."""

    question: str
    answer: str
    sources: tuple[dict[str, Any], ...]
    status: str
    at: float

    @property
    def size(self) -> int:
        """Characters this turn costs against the session's size budget."""
        return (
            len(self.question)
            + len(self.answer)
            + sum(len(str(s.get("excerpt", ""))) + len(str(s.get("url", ""))) for s in self.sources)
            # Each source keeps the passages the model saw: they count too.
            + sum(len(str(p)) for s in self.sources for p in s.get("passages") or ())
        )

    def to_json(self) -> dict[str, Any]:
        """The turn as the API shows it."""
        return {
            "question": self.question,
            "answer": self.answer,
            "sources": list(self.sources),
            "status": self.status,
            "at": self.at,
        }


@dataclass
class Session:
    """A conversation; ``lock`` serialises the questions asked in it."""

    id: str
    created: float
    touched: float
    turns: list[Turn] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0

    def to_json(self) -> dict[str, Any]:
        """The session as the API shows it."""
        return {
            "session_id": self.id,
            "created": self.created,
            "updated": self.turns[-1].at if self.turns else self.created,
            "turns": [t.to_json() for t in self.turns],
        }


class SessionStore:
    """Sessions by id. Expired ones vanish; over ``max_sessions`` the least recently used go.

    A session in use (a question holds or awaits its lock) is never evicted, so two requests
    on one id always share one lock. Time is wall-clock for display, monotonic for expiry.
    """

    def __init__(
        self,
        *,
        ttl_s: float,
        max_chars: int,
        max_sessions: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl_s
        self._max_chars = max_chars
        self._max_sessions = max_sessions
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def _expired(self, session: Session) -> bool:
        return session.users == 0 and self._clock() - session.touched > self._ttl

    def get(self, session_id: str) -> Session | None:
        """The live session with this id, or None."""
        session = self._sessions.get(session_id)
        if session is not None and self._expired(session):
            del self._sessions[session_id]
            return None
        return session

    def delete(self, session_id: str) -> bool:
        """Forget a session; True when there was one."""
        return self._sessions.pop(session_id, None) is not None

    def _get_or_create(self, session_id: str) -> Session:
        session = self.get(session_id)
        now = self._clock()
        if session is None:
            session = Session(id=session_id, created=time.time(), touched=now)
            self._sessions[session_id] = session
            self._evict()
        session.touched = now
        self._sessions.move_to_end(session_id)
        return session

    def _evict(self) -> None:
        for sid in [s.id for s in self._sessions.values() if self._expired(s)]:
            del self._sessions[sid]
        for sid in list(self._sessions):
            if len(self._sessions) <= self._max_sessions:
                break
            if self._sessions[sid].users == 0:
                del self._sessions[sid]

    @asynccontextmanager
    async def use(self, session_id: str) -> AsyncIterator[Session]:
        """Hold the session's lock for one question (created when new)."""
        session = self._get_or_create(session_id)
        session.users += 1
        try:
            async with session.lock:
                yield session
        finally:
            session.users -= 1
            session.touched = self._clock()

    def add_turn(self, session: Session, turn: Turn) -> None:
        """Append a turn, then drop the oldest turns until the session fits its budget."""
        session.turns.append(turn)
        while len(session.turns) > 1 and sum(t.size for t in session.turns) > self._max_chars:
            session.turns.pop(0)
        session.touched = self._clock()
