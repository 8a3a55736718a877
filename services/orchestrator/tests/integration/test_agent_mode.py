"""The agent mode end to end: a scripted tool-calling model (the OpenAI wire format, streamed
``tool_calls`` deltas) drives the real app over real reader, ranker, index and a fake SearXNG.

Covers each tool, the step, token and time bounds, cancellation, the tool-calling probe, and
arithmetic / date questions answered with no search in both modes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from orchestrator.app import create_app
from orchestrator.config import Settings

from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
from services.orchestrator.tests.fakes.fake_tool_llm import (
    MODEL,
    Calls,
    FakeToolLLM,
    Hang,
    Step,
    Text,
    call,
)
from services.orchestrator.tests.integration.support import (
    World,
    codes,
    of,
    results_for,
    status,
    until,
    world,
)

__all__ = ["world"]
pytestmark = pytest.mark.asyncio(loop_scope="module")


class AgentStack:
    """The app over ``world`` with the scripted tool-calling model."""

    def __init__(self, client: httpx.AsyncClient, llm: FakeToolLLM, searx: FakeSearxng) -> None:
        self.client, self.llm, self.searx = client, llm, searx

    async def ask(self, query: str, **options: Any) -> list[dict[str, Any]]:
        reply = await self.client.post(
            "/v1/search",
            json={"query": query, "options": options},
            headers={"Accept": "application/x-ndjson"},
        )
        assert reply.status_code == 200, reply.text
        return [json.loads(line) for line in reply.text.splitlines()]


@asynccontextmanager
async def agent_stack(world: World, script: list[Step], **settings: Any) -> AsyncIterator[Any]:
    async with AsyncExitStack() as es:
        llm = await es.enter_async_context(FakeToolLLM(list(script)))
        llm.repeat_last = bool(settings.pop("repeat_last", False))
        searx = await es.enter_async_context(FakeSearxng(results_for(world)))
        config: dict[str, Any] = {
            "reader_addr": world.reader_addr,
            "ranker_addr": world.ranker_addr,
            "index_addr": world.index_addr,
            "searxng_url": searx.url,
            "llm_provider": "openai",
            "llm_base_url": llm.url,
            "llm_model": MODEL,
            "read_retry_delay_s": 0.05,
            "synthesis_reserve_s": 1.0,
            "rate_questions": "600/minute",
            "agent": "on",
            **settings,
        }
        app: FastAPI = create_app(Settings(**config))
        await es.enter_async_context(app.router.lifespan_context(app))
        transport = httpx.ASGITransport(app=app)
        client = await es.enter_async_context(
            httpx.AsyncClient(transport=transport, base_url="http://localhost", timeout=60)
        )
        yield AgentStack(client, llm, searx)


def tools_run(events: list[dict[str, Any]]) -> dict[str, bool]:
    """Each tool the agent ran, and whether its last call succeeded."""
    return {p["tool"]: p["ok"] for p in of(events, "progress") if p["stage"] == "tool.completed"}


def tool_results(llm: FakeToolLLM) -> dict[str, str]:
    """What each tool call returned, by call id, as the model was sent it."""
    last = llm.tool_requests()[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in last if m["role"] == "tool"}


async def test_each_tool_runs_and_the_answer_is_cited(world: World) -> None:
    tides, moon, spring = (f"{world.pages_url}/{t}" for t in ("tides", "moon", "spring"))
    script: list[Step] = [
        call("search_web", query="what causes tides"),
        Calls((("read_url", {"url": tides}), ("calculator", {"expression": "17 * 23"}))),
        Calls((("current_datetime", {}), ("list_documents", {}))),
        call("search_documents", query="tides"),
        call("compare_documents", first=moon, second=spring, aspect="tides"),
        Text("The Moon causes tides."),
    ]
    async with agent_stack(world, script) as s:
        events = await s.ask("why are there tides", sources=["web", "local"])
        results = tool_results(s.llm)
        sent_tools = {t["function"]["name"] for t in s.llm.tool_requests()[0]["tools"]}
    assert status(events) == "answered", events
    ran = tools_run(events)
    assert set(ran) == {
        "search_web",
        "read_url",
        "calculator",
        "current_datetime",
        "list_documents",
        "search_documents",
        "compare_documents",
    }
    assert sent_tools == set(ran)
    assert all(ran[n] for n in ("search_web", "read_url", "calculator", "compare_documents"))
    assert results["call_2_1"] == "391"
    assert json.loads(results["call_3_0"])["date"][:4] == str(datetime.now().year)
    assert "search.started" in [e["type"] for e in events]
    assert any(r["source"] == "web" for r in of(events, "search.completed"))
    assert any(r["source"] == "local" for r in of(events, "search.completed"))
    urls = {src["url"] for src in of(events, "sources")[0]["sources"]}
    assert {tides, moon, spring, "quarry:calculator"} <= urls
    done = of(events, "answer.completed")[0]
    assert done["sentences"]
    assert done["cited"] == [1]
    # The tool results went back as role "tool" messages with the calls' ids.
    assert s.llm.tool_requests()[1]["messages"][-1]["tool_call_id"] == "call_1_0"


async def test_web_tools_are_not_offered_when_web_search_is_off(world: World) -> None:
    async with agent_stack(world, [call("search_web", query="x"), Text("")], web_search="off") as s:
        events = await s.ask("why are there tides", sources=["local"])
        offered = {t["function"]["name"] for t in s.llm.tool_requests()[0]["tools"]}
    assert not offered & {"search_web", "read_url"}
    assert tools_run(events) == {"search_web": False}
    assert not [r for r in of(events, "search.started") if r["source"] == "web"]
    assert s.searx.queries == []


async def test_the_step_bound_stops_a_model_that_never_stops(world: World) -> None:
    script: list[Step] = [call("calculator", expression="2^10")]
    async with agent_stack(world, script, repeat_last=True, agent_max_steps=3) as s:
        events = await s.ask("how much is two to the tenth")
        asked = len(s.llm.tool_requests())
    assert asked == 3
    assert "agent_limit" in codes(events)
    assert status(events) == "answered"
    assert of(events, "sources")[0]["sources"][0]["url"] == "quarry:calculator"


async def test_the_token_bound_stops_the_agent(world: World) -> None:
    # Each scripted turn reports 20 completion tokens: 128 allows 7 turns of the 30 steps.
    script: list[Step] = [call("current_datetime")]
    async with agent_stack(
        world, script, repeat_last=True, agent_max_steps=30, agent_max_tokens=128
    ) as s:
        events = await s.ask("tell me about today please")
        asked = len(s.llm.tool_requests())
    assert asked == 7
    assert "agent_limit" in codes(events)


async def test_the_time_bound_answers_when_the_model_hangs(world: World) -> None:
    script: list[Step] = [call("calculator", expression="6*7"), Hang()]
    async with agent_stack(world, script, question_budget_s=4, synthesis_reserve_s=2) as s:
        events = await s.ask("how much is six times seven")
    assert "budget_exhausted" in codes(events)
    assert status(events) == "answered"
    assert of(events, "answer.completed")


async def test_cancelling_the_request_closes_the_model_stream(world: World) -> None:
    async with agent_stack(world, [Hang()], question_budget_s=600) as s:
        asking = asyncio.create_task(s.ask("why are there tides"))
        await until(lambda: len(s.llm.tool_requests()) == 1, 30)
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        await until(lambda: s.llm.disconnects == 1, 30)


@pytest.mark.parametrize("agent", ["on", "off"])
@pytest.mark.parametrize(
    ("question", "expected"),
    [("What is 17 * 23?", "391"), ("what is 2^10", "1024"), ("what is the date today?", "")],
)
async def test_arithmetic_and_date_need_no_search(
    world: World, agent: str, question: str, expected: str
) -> None:
    async with agent_stack(world, [Text("no")], agent=agent) as s:
        events = await s.ask(question)
    types = [e["type"] for e in events]
    assert not [t for t in types if t.startswith(("search.", "read."))]
    assert s.searx.queries == []
    assert s.llm.requests == []
    answer = of(events, "answer.completed")[0]["text"]
    assert (expected or str(datetime.now().astimezone().year)) in answer


async def test_auto_probes_once_per_model(world: World) -> None:
    script: list[Step] = [
        call("calculator", expression="1234 * 5678"),  # the probe's answer
        call("search_web", query="tides"),
        Text("done"),
        call("search_web", query="moon"),
        Text("done"),
    ]
    async with agent_stack(world, script, agent="auto") as s:
        first = await s.ask("why are there tides")
        second = await s.ask("what about the moon")
        probes = [r for r in s.llm.tool_requests() if len(r["tools"]) == 1]
    assert len(probes) == 1
    assert "search_web" in tools_run(first)
    assert "search_web" in tools_run(second)


async def test_auto_keeps_the_pipeline_for_a_model_that_fails_the_probe(world: World) -> None:
    async with agent_stack(world, [Text("I think it is about 7 million.")], agent="auto") as s:
        events = await s.ask("why are there tides", mode="speed")
    assert tools_run(events) == {}
    assert len(s.llm.tool_requests()) == 1  # the probe only
    assert s.searx.queries  # the pipeline searched
