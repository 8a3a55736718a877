"""Conversation sessions: live ones in memory (TTL, size budget, one lock per session), and an
optional ``SessionDB`` underneath that keeps them across restarts.

A session belongs to a principal (orchestrator/core/principals.py) and is addressed by its owner and
its id together: session ids are chosen by clients, so two users may both have a session
"work", and neither can reach, join or even detect the other's (no map here is keyed by the id
alone).

Without a database a session is forgotten when it expires or is evicted. With one, memory is
only a cache of the sessions in use: every change is written through, and a session that is
not in memory is loaded from the database on its next use.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from orchestrator.core.principals import LOCAL_ID

Kind = Literal["chat", "research"]
#: The columns of ``session_turns`` a turn is read from and written to (Turn.from_row, as_row).
TURN_COLUMNS = "question, answer, sources, status, at, policy"
#: A session's address: (owner, session id).
Key = tuple[str, str]


@dataclass(frozen=True)
class Turn:
    """One question and what the engine answered, with the numbered sources it used."""

    question: str
    answer: str
    sources: tuple[dict[str, Any], ...]
    status: str
    at: float
    # What the domain policy dropped for this answer ({} without rules; docs/sources.md).
    policy: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def size(self) -> int:
        """Characters this turn costs against the session's size budget."""
        return (
            len(self.question)
            + len(self.answer)
            + sum(len(str(s.get("excerpt", ""))) + len(str(s.get("url", ""))) for s in self.sources)
            # Each source keeps the passages the model saw: they count too.
            + sum(len(str(p)) for s in self.sources for p in s.get("passages") or ())
            + sum(len(str(d)) for d in self.policy.get("dropped") or ())
        )

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Turn:
        """A turn from a ``session_turns`` row in TURN_COLUMNS order (sources and policy as
        JSON text)."""
        question, answer, sources, status, at, policy = row
        return cls(question, answer, tuple(json.loads(sources)), status, at, json.loads(policy))

    def as_row(self) -> tuple[Any, ...]:
        """The turn's values in TURN_COLUMNS order; ``from_row``'s inverse."""
        sources = json.dumps(list(self.sources))
        return (self.question, self.answer, sources, self.status, self.at, json.dumps(self.policy))

    def to_json(self) -> dict[str, Any]:
        """The turn as the API shows it."""
        return {
            "question": self.question,
            "answer": self.answer,
            "sources": list(self.sources),
            "status": self.status,
            "at": self.at,
            **({"policy": self.policy} if self.policy else {}),
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
    # Set by a rename; otherwise the first question is the title.
    title: str = ""
    kind: Kind = "chat"
    owner: str = LOCAL_ID
    # Characters its turns hold (Turn.size summed), kept by the store for its memory budget.
    chars: int = 0

    @property
    def key(self) -> Key:
        """The session's address in the store."""
        return (self.owner, self.id)

    @property
    def updated(self) -> float:
        """When the last turn was added (the creation time before that)."""
        return self.turns[-1].at if self.turns else self.created

    def summary(self) -> dict[str, Any]:
        """The session as ``GET /v1/sessions`` lists it."""
        first = self.turns[0].question if self.turns else ""
        return {
            "session_id": self.id,
            "owner": self.owner,
            "title": self.title or first,
            "type": self.kind,
            "created": self.created,
            "updated": self.updated,
            "turns": len(self.turns),
        }

    def to_json(self) -> dict[str, Any]:
        """The session as the API shows it."""
        return {**self.summary(), "turns": [t.to_json() for t in self.turns]}


class SessionDB(Protocol):
    """Where sessions outlive the process (orchestrator.adapters.store.sessions implements it)."""

    async def load(self, owner: str, session_id: str) -> Session | None:
        """The owner's stored session, or None."""
        ...

    async def save(self, session: Session) -> None:
        """Store the session as it is now (its title and every turn)."""
        ...

    async def delete(self, owner: str, session_id: str) -> bool:
        """Forget the owner's stored session; True when there was one."""
        ...

    async def page(
        self, owner: str | None, offset: int, limit: int
    ) -> tuple[list[dict[str, Any]], int]:
        """The owner's summaries (everyone's for None) newest first, and how many there are."""
        ...


class SessionStore:
    """Sessions by id. Expired ones leave memory; over ``max_sessions``, or over
    ``max_total_chars`` of turns in memory, the least recently used go. With a ``db`` they stay
    stored and come back on their next use.

    Both bounds matter: a session may hold up to ``max_chars`` (the passages each answer's
    model saw count), so a cap on the count alone let 1,000 sessions hold up to 60 million
    characters.

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
        db: SessionDB | None = None,
        max_total_chars: int | None = None,
    ) -> None:
        self._ttl = ttl_s
        self._max_chars = max_chars
        self._max_sessions = max_sessions
        self._max_total_chars = max_total_chars
        self._clock = clock
        self._db = db
        self._sessions: OrderedDict[Key, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def max_chars(self) -> int:
        """Characters of turns one session keeps (the oldest turns leave beyond it)."""
        return self._max_chars

    @property
    def persistent(self) -> bool:
        """True when sessions survive restarts."""
        return self._db is not None

    def _expired(self, session: Session) -> bool:
        return session.users == 0 and self._clock() - session.touched > self._ttl

    def cached(self, owner: str, session_id: str) -> Session | None:
        """The owner's session if it is in memory now (no database read), else None."""
        key = (owner, session_id)
        session = self._sessions.get(key)
        if session is not None and self._expired(session):
            del self._sessions[key]
            return None
        return session

    async def get(self, owner: str, session_id: str) -> Session | None:
        """The owner's session with this id (from memory, else the database), or None."""
        session = self.cached(owner, session_id)
        if session is None and self._db is not None:
            session = await self._db.load(owner, session_id)
            if session is not None:
                session.chars = sum(t.size for t in session.turns)
                # another request may have cached it while the database answered
                session = self._sessions.setdefault(session.key, session)
                session.touched = self._clock()
                self._evict()
        return session

    async def delete(self, owner: str, session_id: str) -> bool:
        """Forget the owner's session; True when there was one."""
        found = self._sessions.pop((owner, session_id), None) is not None
        if self._db is not None:
            found = await self._db.delete(owner, session_id) or found
        return found

    async def rename(self, owner: str, session_id: str, title: str) -> Session | None:
        """Give the owner's session a title; None when there is no such session."""
        session = await self.get(owner, session_id)
        if session is None:
            return None
        session.title = title
        await self._save(session)
        return session

    async def page(
        self, owner: str | None, offset: int, limit: int
    ) -> tuple[list[dict[str, Any]], int]:
        """The owner's session summaries (everyone's for None), newest first, and the total."""
        if self._db is not None:
            return await self._db.page(owner, offset, limit)
        live = [
            s
            for s in list(self._sessions.values())
            if not self._expired(s) and s.turns and owner in (None, s.owner)
        ]
        live.sort(key=lambda s: s.updated, reverse=True)
        return [s.summary() for s in live[offset : offset + limit]], len(live)

    async def _get_or_create(self, owner: str, session_id: str) -> Session:
        session = await self.get(owner, session_id)
        now = self._clock()
        if session is None:
            fresh = Session(id=session_id, created=time.time(), touched=now, owner=owner)
            session = self._sessions.setdefault(fresh.key, fresh)
            self._evict()
        session.touched = now
        self._sessions.move_to_end(session.key)
        return session

    def in_memory_chars(self) -> int:
        """Characters the turns of the sessions in memory hold."""
        return sum(s.chars for s in self._sessions.values())

    def _evict(self) -> None:
        for key in [s.key for s in self._sessions.values() if self._expired(s)]:
            del self._sessions[key]
        budget = self._max_total_chars
        total = self.in_memory_chars() if budget is not None else 0
        for key in list(self._sessions):  # least recently used first
            over_budget = budget is not None and total > budget
            if len(self._sessions) <= self._max_sessions and not over_budget:
                break
            session = self._sessions[key]
            if session.users == 0:
                total -= session.chars
                del self._sessions[key]

    @asynccontextmanager
    async def use(self, owner: str, session_id: str) -> AsyncIterator[Session]:
        """Hold the owner's session's lock for one question (created when new)."""
        session = await self._get_or_create(owner, session_id)
        session.users += 1
        try:
            async with session.lock:
                yield session
        finally:
            session.users -= 1
            session.touched = self._clock()

    async def add_turn(
        self,
        session: Session,
        turn: Turn,
        *,
        replace_from: int | None = None,
        kind: Kind | None = None,
    ) -> None:
        """Append a turn (replacing the turns from index ``replace_from`` on: an edited turn
        and everything after it), then drop the oldest turns until the session fits.

        ``kind`` names what the first turn of a new session came from (a research run's
        conversation is ``research``); a session that already has turns keeps its kind."""
        if kind is not None and not session.turns:
            session.kind = kind
        if replace_from is not None:
            del session.turns[replace_from:]
        session.turns.append(turn)
        while len(session.turns) > 1 and sum(t.size for t in session.turns) > self._max_chars:
            session.turns.pop(0)
        session.chars = sum(t.size for t in session.turns)
        session.touched = self._clock()
        self._evict()
        await self._save(session)

    async def _save(self, session: Session) -> None:
        if self._db is not None:
            await self._db.save(session)
