"""An LLM that never sends a first token costs the first-token deadline, not the question's
budget: against the scripted OpenAI-compatible server (its real wire format, over HTTP), with a
budget far longer than the test may take."""

from __future__ import annotations

import asyncio

import pytest
from orchestrator.config import Settings

from services.orchestrator.tests.fakes.fake_llm import Hang
from services.orchestrator.tests.integration.support import (
    World,
    codes,
    judge,
    of,
    stack,
    status,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here
# Budgets no test waits out: only the first-token deadline can end these calls in time.
LONG = {"question_budget_s": 3000, "llm_timeout_s": 3000, "llm_provider": "openai"}


async def test_the_default_first_token_deadline_is_well_inside_the_question_budget() -> None:
    fields = Settings.model_fields  # the defaults, whatever this shell's environment says
    first_token = fields["llm_first_token_timeout_s"].default
    assert first_token <= fields["question_budget_s"].default / 4


async def test_a_plan_call_with_no_first_token_gives_up_at_the_deadline(world: World) -> None:
    async with stack(world, llm_first_token_timeout_s=0.5, **LONG) as s:
        s.llm.queue("plan", Hang())
        s.llm.queue("judge", Hang(), judge("sufficient"))
        events = await asyncio.wait_for(s.ask("what causes tides"), 60)
    assert s.llm.calls[0].stream is True  # structured calls stream, so "first token" exists
    assert "llm_timeout" in codes(events)
    assert s.searx.queries[0] == "what causes tides"  # the plan's default: search as asked
    assert status(events) == "answered"
    assert of(events, "answer.completed")[0]["text"]


async def test_an_answer_with_no_first_token_ends_in_an_error_naming_the_setting(
    world: World,
) -> None:
    async with stack(world, llm_first_token_timeout_s=0.5, **LONG) as s:
        s.llm.queue("judge", judge("sufficient"))
        s.llm.queue("synthesis", Hang())
        events = await asyncio.wait_for(s.ask(), 60)
    (error,) = of(events, "error")
    assert error["code"] == "llm_unavailable"
    assert "LLM_FIRST_TOKEN_TIMEOUT_S" in error["message"]
