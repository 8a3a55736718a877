"""ASK: the one use case every face calls to answer a question (HTTP, OpenAI-compatible, MCP).

The faces differ only in data: where the conversation comes from and whether the turn is kept
(``Conversation``), and which options the caller set. Everything else — the sources policy,
the run, keeping the turn — is decided here once, so the faces cannot drift apart again (they
had: MCP piled up sessions, the OpenAI face decided its sources its own way).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from orchestrator.core.ask.loop import RunOutcome, run_question
from orchestrator.core.ask.modes import Mode
from orchestrator.core.ask.state import Deps, RunOptions
from orchestrator.core.events import EventSink
from orchestrator.core.policy import RunPolicy, SourcesPolicy, domains_for, sources_for
from orchestrator.core.sessions import SessionStore, Turn

logger = logging.getLogger(__name__)


class AskOptions(Protocol):
    """What a caller may set for one question (``api/models.SearchOptions`` is one); None
    means "the server's default"."""

    @property
    def max_rounds(self) -> int | None: ...
    @property
    def prefetch(self) -> bool | None: ...
    @property
    def categories(self) -> str | None: ...
    @property
    def language(self) -> str | None: ...
    @property
    def time_range(self) -> str | None: ...
    @property
    def sources(self) -> Sequence[str] | None: ...
    @property
    def allow_unsourced(self) -> bool | None: ...
    @property
    def search_cache(self) -> bool | None: ...
    @property
    def mode(self) -> Mode | None: ...
    @property
    def detail(self) -> Literal["brief", "full"] | None: ...
    @property
    def engines(self) -> Sequence[str] | None: ...
    @property
    def pageno(self) -> int | None: ...


def run_options(opts: AskOptions | None, settings: SourcesPolicy) -> RunOptions:
    """A caller's options over the server's defaults, the sources policy applied.

    Raises:
        SearchOff: the caller asked only for sources that are off (refused before anything
            runs, on every face alike).
    """
    if opts is None:
        return RunOptions(sources=sources_for(None, settings))
    return RunOptions(
        max_rounds=opts.max_rounds,
        prefetch=opts.prefetch,
        categories=opts.categories,
        language=opts.language,
        time_range=opts.time_range,
        sources=sources_for(opts.sources, settings),
        allow_unsourced=opts.allow_unsourced,
        search_cache=opts.search_cache,
        mode=opts.mode,
        detail=opts.detail,
        # Not every face offers it (the OpenAI and MCP faces take the server's setting).
        agent=getattr(opts, "agent", None),
        # checked names (api/shared/options.py ENGINE_PATTERN), each asked once
        engines=tuple(dict.fromkeys(e.strip() for e in opts.engines or ())),
        pageno=opts.pageno or 1,
    )


def prepare(
    text: str,
    opts: AskOptions | None,
    settings: RunPolicy,
    domains: Mapping[str, Sequence[str]] | None = None,
) -> tuple[str, RunOptions]:
    """What a question searches — ``text`` without its ``site:`` operators — and its options:
    run_options plus the domain policy of the server, the caller's ``domains`` (``allow`` /
    ``deny``) and the operators (docs/sources.md).

    Raises:
        SearchOff: as run_options.
        InvalidDomain, DomainNotAllowed, NothingLeftToSearch: a bad domain, a request allow
            rule outside the server's list, a question of operators only (refused before
            anything runs, on every face alike).
    """
    options = run_options(opts, settings)
    searched, policy = domains_for(text, domains, settings)
    return searched, dataclasses.replace(options, domains=policy)


@dataclass(frozen=True)
class Conversation:
    """Where a question's history comes from, and whether its turn is kept.

    ``session_id`` with ``keep``: the owner's session is read and the new turn kept (``edit``,
    0-based, re-asks that turn: the run sees the turns before it, the new turn replaces it and
    every later one). Without ``keep``: ``history`` is what the client sent (OpenAI's messages)
    or nothing (an MCP tool call), and nothing is left behind; ``session_id`` then only labels
    the run in logs and traces.
    """

    session_id: str = ""
    keep: bool = False
    edit: int | None = None
    history: tuple[Turn, ...] = field(default=())

    @classmethod
    def kept(cls, session_id: str, edit: int | None = None) -> Conversation:
        """The owner's session ``session_id`` (created on first use); the turn is kept."""
        return cls(session_id=session_id, keep=True, edit=edit)

    @classmethod
    def given(cls, history: Sequence[Turn], label: str = "") -> Conversation:
        """A conversation the client sends each time; nothing is kept."""
        return cls(session_id=label, history=tuple(history))


@dataclass(frozen=True)
class Question:
    """One question from one owner, as every face hands it over."""

    text: str
    owner: str
    run_id: str
    options: RunOptions
    conversation: Conversation = field(default_factory=Conversation)
    # The question as typed, site: operators included, kept in the turn ("": ``text``).
    typed: str = ""


async def ask(deps: Deps, sessions: SessionStore, sink: EventSink, q: Question) -> RunOutcome:
    """Answer ``q``, emitting its events into ``sink``; keep the turn unless it failed or the
    conversation is not kept."""
    talk = q.conversation
    if not talk.keep:
        outcome = await _run(deps, sink, q, list(talk.history), talk.session_id)
        logger.info("run finished", extra={"run_id": q.run_id, "status": outcome.status})
        return outcome
    async with sessions.use(q.owner, talk.session_id) as session:
        keep = len(session.turns) if talk.edit is None else min(talk.edit, len(session.turns))
        outcome = await _run(deps, sink, q, session.turns[:keep], talk.session_id)
        if outcome.status != "error":
            sources = tuple(outcome.sources)
            turn = Turn(
                q.typed or q.text,
                outcome.answer,
                sources,
                outcome.status,
                time.time(),
                policy=outcome.policy,
            )
            await sessions.add_turn(session, turn, replace_from=keep)
    logger.info("run finished", extra={"run_id": q.run_id, "status": outcome.status})
    return outcome


async def _run(
    deps: Deps, sink: EventSink, q: Question, history: list[Turn], session_id: str
) -> RunOutcome:
    return await run_question(
        deps,
        sink,
        question=q.text,
        history=history,
        options=q.options,
        run_id=q.run_id,
        session_id=session_id,
    )
