"""The ask use case: every face's question, its conversation as data."""

from __future__ import annotations

import pytest
from orchestrator.api.shared.options import SearchOptions
from orchestrator.config import Settings
from orchestrator.core.ask.service import Conversation, Question, ask, run_options
from orchestrator.core.events import EventSink
from orchestrator.core.policy import SearchOff
from orchestrator.core.sessions import SessionStore, Turn

from services.orchestrator.tests.unit.harness import harness

OLD = Turn("what is quarry", "An answer engine.", (), "answered", 0.0)


def _store() -> SessionStore:
    return SessionStore(ttl_s=600, max_chars=100_000, max_sessions=10)


async def _ask(store: SessionStore, talk: Conversation, text: str = "who runs it?") -> str:
    async with harness() as h:
        sink = EventSink()
        q = Question(text, "alice", "r1", run_options(None, h.settings), talk)
        outcome = await ask(h.deps, store, sink, q)
        sink.close()
    return outcome.status


async def test_a_kept_conversation_reads_its_turns_and_keeps_the_new_one() -> None:
    store = _store()
    async with store.use("alice", "s1") as session:
        await store.add_turn(session, OLD)
    assert await _ask(store, Conversation.kept("s1")) == "answered"
    kept = await store.get("alice", "s1")
    assert kept is not None
    assert [t.question for t in kept.turns] == ["what is quarry", "who runs it?"]
    assert await store.get("bob", "s1") is None  # the owner is part of the address


async def test_an_edit_replaces_that_turn_and_everything_after_it() -> None:
    store = _store()
    async with store.use("alice", "s1") as session:
        for text in ("first", "second", "third"):
            await store.add_turn(session, Turn(text, "a.", (), "answered", 0.0))
    await _ask(store, Conversation.kept("s1", edit=1), text="second, again")
    kept = await store.get("alice", "s1")
    assert kept is not None
    assert [t.question for t in kept.turns] == ["first", "second, again"]


async def test_given_and_one_off_conversations_leave_nothing_behind() -> None:
    store = _store()
    await _ask(store, Conversation.given([OLD], label="openai-r1"))
    await _ask(store, Conversation())
    page, total = await store.page("alice", 0, 10)
    assert (page, total) == ([], 0)


def test_web_off_refuses_a_web_only_question_on_every_face_alike() -> None:
    settings = Settings(web_search="off")
    with pytest.raises(SearchOff):
        run_options(SearchOptions(sources=["web"]), settings)
    assert "web" not in run_options(None, settings).sources
