"""Conversations that last (issue 15 part 1), through the real HTTP API and production wiring:
the history budget, two sessions at once, listing, renaming, deleting, editing a turn."""

from __future__ import annotations

import asyncio

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
