"""Sessions (TTL, size budget, per-session lock), events (wire formats, result) and budgets."""

from __future__ import annotations

import asyncio
import json

from orchestrator.api.shared.sse import frame, sse
from orchestrator.core.budget import Deadline
from orchestrator.core.events import Event, EventSink, ResultCollector
from orchestrator.core.sessions import SessionStore, Turn


class Clock:
    """A hand-driven monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def turn(question: str, answer: str = "a") -> Turn:
    return Turn(question, answer, ({"n": 1, "url": "http://x/", "excerpt": "e"},), "answered", 0.0)


async def test_sessions_expire_after_the_ttl() -> None:
    clock = Clock()
    store = SessionStore(ttl_s=10, max_chars=10_000, max_sessions=10, clock=clock)
    async with store.use("local", "s") as session:
        await store.add_turn(session, turn("q1"))
    clock.now += 9
    assert await store.get("local", "s") is not None
    clock.now += 11
    assert await store.get("local", "s") is None


async def test_oldest_turns_go_first_when_over_the_size_budget() -> None:
    store = SessionStore(ttl_s=60, max_chars=1000, max_sessions=10)
    async with store.use("local", "s") as session:
        for i in range(5):
            await store.add_turn(session, turn(f"question {i}", "x" * 300))
    kept = [t.question for t in session.turns]
    assert kept == ["question 2", "question 3", "question 4"]
    assert sum(t.size for t in session.turns) <= 1000


async def test_least_recently_used_sessions_are_evicted_but_never_one_in_use() -> None:
    store = SessionStore(ttl_s=60, max_chars=10_000, max_sessions=2)
    async with store.use("local", "busy"):
        for sid in ("a", "b", "c"):
            async with store.use("local", sid):
                pass
        assert await store.get("local", "busy") is not None
    assert await store.get("local", "a") is None
    assert len(store) == 2


async def test_one_session_serialises_its_questions() -> None:
    store = SessionStore(ttl_s=60, max_chars=10_000, max_sessions=10)
    order: list[str] = []

    async def ask(name: str) -> None:
        async with store.use("local", "s"):
            order.append(f"{name}+")
            await asyncio.sleep(0.01)
            order.append(f"{name}-")

    await asyncio.gather(ask("a"), ask("b"))
    assert order == ["a+", "a-", "b+", "b-"]


async def test_sink_numbers_events_and_warns_once_per_code() -> None:
    sink = EventSink()
    sink.emit("run.started", {"api_version": "1"})
    sink.warn("ranker_unavailable", "first")
    sink.warn("ranker_unavailable", "second")
    sink.close()
    sink.emit("answer.delta", {"text": "late"})
    events = [e async for e in sink]
    assert [(e.seq, e.type) for e in events] == [(0, "run.started"), (1, "warning")]


def test_wire_formats() -> None:
    event = Event(3, "answer.delta", {"text": "héllo\nworld"})
    text = frame("sse", event.seq, event.type, event.data).decode()
    assert text.startswith("id: 3\nevent: answer.delta\ndata: ")
    assert text.endswith("\n\n")
    assert json.loads(text.split("data: ", 1)[1]) == {"text": "héllo\nworld"}
    line = frame("ndjson", event.seq, event.type, event.data)
    assert json.loads(line) == {"seq": 3, "type": "answer.delta", "data": event.data}
    assert line.count(b"\n") == 1


def test_an_event_name_cannot_start_a_second_event() -> None:
    # The framing strips line breaks from names: "x\n\ndata: forged" stays one event.
    text = sse(1, "x\n\nevent: forged", {}).decode()
    assert text.count("\n\n") == 1
    assert [line for line in text.splitlines() if line.startswith("event:")] == [
        "event: xevent: forged"
    ]


def test_result_collector_folds_a_run() -> None:
    collector = ResultCollector()
    for seq, (type_, data) in enumerate(
        [
            ("run.started", {"run_id": "r", "session_id": "s"}),
            ("warning", {"code": "search_limit", "message": "m"}),
            ("sources", {"sources": [{"n": 1, "url": "u", "title": "t", "excerpt": "e"}]}),
            ("answer.completed", {"text": "A [1].", "cited": [1], "removed_citations": [2]}),
            ("run.completed", {"status": "answered", "rounds": 3, "pages_read": 9}),
        ]
    ):
        collector.add(Event(seq, type_, data))  # type: ignore[arg-type]
    result = collector.result
    assert (result["status"], result["answer"], result["cited"]) == ("answered", "A [1].", [1])
    assert result["warnings"] == [{"code": "search_limit", "message": "m"}]
    assert result["stats"] == {"rounds": 3, "pages_read": 9}
    assert result["session_id"] == "s"


def test_deadline_caps_timeouts_by_what_is_left() -> None:
    clock = Clock()
    deadline = Deadline(10, clock=clock)
    assert deadline.timeout(3) == 3
    clock.now += 8
    assert deadline.timeout(3) == 2
    assert deadline.timeout(3, reserve=1.5) == 0.5
    clock.now += 5
    assert deadline.remaining() == 0
    assert deadline.expired


def test_the_passages_a_turn_keeps_count_against_the_budget() -> None:
    source = {"n": 1, "url": "http://x/", "excerpt": "e", "passages": ["a" * 500, "b" * 300]}
    bare = Turn("q", "a", ({"n": 1, "url": "http://x/", "excerpt": "e"},), "answered", 0.0)
    kept = Turn("q", "a", (source,), "answered", 0.0)
    assert kept.size == bare.size + 800
