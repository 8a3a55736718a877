"""Conversations that last (issue 15 part 1), through the real HTTP API and production wiring:
the history budget, two sessions at once, listing, renaming, deleting, editing a turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from services.orchestrator.tests.fakes.fake_llm import Say
from services.orchestrator.tests.integration.support import (
    World,
    judge,
    of,
    stack,
    status,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

ANSWER = "A" * 100


async def test_history_budget_drops_the_oldest_turn_first_with_a_memory_event(
    world: World,
) -> None:
    # each turn costs len(question) + 100 characters; 250 holds two of them
    questions = ["alpha tides question", "beta tides question", "gamma tides question"]
    async with stack(world, history_chars=250) as s:
        for q in questions:
            s.llm.queue("judge", judge("sufficient"))
            s.llm.queue("synthesis", Say(ANSWER))
            assert status(await s.ask(q, session_id="budget")) == "answered"
        s.llm.queue("judge", judge("sufficient"))
        events = await s.ask("delta tides question", session_id="budget")
    (memory,) = of(events, "memory")
    assert memory == {"turns": 3, "kept": 2, "dropped": 1, "chars": 239, "budget": 250}
    plan = s.llm.calls_of("plan")[-1]
    prompt = "\n".join(m["content"] for m in plan.body["messages"])
    assert "alpha tides question" not in prompt  # the oldest left first
    assert "beta tides question" in prompt
    assert "gamma tides question" in prompt
    assert ANSWER in prompt  # answers are carried whole, not clipped


async def test_two_sessions_at_once_never_see_each_others_history(world: World) -> None:
    async with stack(world) as s:
        s.llm.token_delay = 0.01
        await asyncio.gather(
            s.ask("red tides question", session_id="red"),
            s.ask("blue tides question", session_id="blue"),
        )
        await asyncio.gather(
            s.ask("red follow-up", session_id="red"),
            s.ask("blue follow-up", session_id="blue"),
        )
    for plan in s.llm.calls_of("plan"):
        prompt = "\n".join(m["content"] for m in plan.body["messages"])
        mine = "red" if "red follow-up" in prompt or "red tides" in prompt else "blue"
        other = "blue" if mine == "red" else "red"
        assert f"{other} tides question" not in prompt


async def test_list_rename_and_delete_sessions(world: World) -> None:
    async with stack(world) as s:
        await s.ask("older tides question", session_id="older")
        await s.ask("newer tides question", session_id="newer")
        await s.ask("a follow-up on tides", session_id="older")  # "older" is now the newest
        listed = (await s.client.get("/v1/sessions")).json()
        paged = (await s.client.get("/v1/sessions", params={"offset": 1, "limit": 1})).json()
        renamed = await s.client.patch("/v1/sessions/newer", json={"title": "Tides, renamed"})
        after = (await s.client.get("/v1/sessions")).json()
        deleted = await s.client.delete("/v1/sessions/older")
        gone = await s.client.get("/v1/sessions/older")
        left = (await s.client.get("/v1/sessions")).json()
        missing = await s.client.patch("/v1/sessions/nope", json={"title": "x"})
        bad = await s.client.patch("/v1/sessions/newer", json={"title": ""})
    assert [x["session_id"] for x in listed["sessions"]] == ["older", "newer"]
    assert listed["total"] == 2
    first = listed["sessions"][0]
    assert (first["title"], first["type"], first["turns"]) == ("older tides question", "chat", 2)
    assert [x["session_id"] for x in paged["sessions"]] == ["newer"]
    assert renamed.status_code == 200
    assert renamed.json()["title"] == "Tides, renamed"
    assert [x["title"] for x in after["sessions"]] == ["older tides question", "Tides, renamed"]
    assert deleted.status_code == 204
    assert gone.status_code == 404
    assert [x["session_id"] for x in left["sessions"]] == ["newer"]
    assert missing.status_code == 404
    assert bad.status_code == 422
    assert bad.headers["content-type"].startswith("application/problem+json")


async def test_editing_turn_1_of_3_replaces_turns_2_and_3(world: World) -> None:
    async with stack(world) as s:
        for q in ("first tides question", "second tides question", "third tides question"):
            await s.ask(q, session_id="edit")
        events = await s.ask("first tides question, edited", session_id="edit", edit_turn=1)
        session = (await s.client.get("/v1/sessions/edit")).json()
        too_far = await s.client.post(
            "/v1/search", json={"query": "q", "session_id": "edit", "edit_turn": 5}
        )
    assert status(events) == "answered"
    assert not of(events, "memory")  # turn 1 re-asked: no earlier turns carried
    plan = s.llm.calls_of("plan")[-1]
    prompt = "\n".join(m["content"] for m in plan.body["messages"])
    assert "second tides question" not in prompt
    assert [t["question"] for t in session["turns"]] == ["first tides question, edited"]
    assert too_far.status_code == 422
    assert "1 to 1" in too_far.json()["detail"]


async def test_a_conversation_survives_an_orchestrator_restart(
    world: World, tmp_path: Path
) -> None:
    data = str(tmp_path / "data")
    async with stack(world, data_dir=data) as s:
        await s.ask("persistent tides question", session_id="kept")
        await s.client.patch("/v1/sessions/kept", json={"title": "Kept"})
    async with stack(world, data_dir=data) as s:  # a new process's worth of state
        listed = (await s.client.get("/v1/sessions")).json()
        before = (await s.client.get("/v1/sessions/kept")).json()
        events = await s.ask("and the follow-up?", session_id="kept")
        after = (await s.client.get("/v1/sessions/kept")).json()
    assert [(x["session_id"], x["title"]) for x in listed["sessions"]] == [("kept", "Kept")]
    assert [t["question"] for t in before["turns"]] == ["persistent tides question"]
    assert of(events, "memory")[0]["kept"] == 1
    plan = s.llm.calls_of("plan")[-1]
    assert "persistent tides question" in "\n".join(m["content"] for m in plan.body["messages"])
    assert [t["question"] for t in after["turns"]] == [
        "persistent tides question",
        "and the follow-up?",
    ]
    assert after["turns"][0]["sources"] == before["turns"][0]["sources"]
