"""More than one way to search (issue 15 part 3), through the real HTTP API and production
wiring: the Brave Search API against a local stand-in speaking its JSON and rate-limit headers,
failover and merging between two SearXNG stand-ins, the search-result cache, category routing,
engine problems named in a warning, and publication dates reaching the prompt and `sources`."""

from __future__ import annotations

import pytest

from services.orchestrator.tests.fakes.fake_brave import KEY, FakeBrave, brave_result
from services.orchestrator.tests.fakes.fake_llm import Say
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result
from services.orchestrator.tests.integration.support import (
    TOPICS,
    World,
    codes,
    judge,
    of,
    results_for,
    stack,
    status,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


def brave_results(world: World) -> list[dict[str, object]]:
    return [
        brave_result(f"{world.pages_url}/{t}", f"All about <strong>{t}</strong>", TOPICS[t][:80])
        for t in TOPICS
    ]


async def test_brave_backend_answers_and_shows_its_monthly_quota(world: World) -> None:
    async with FakeBrave(brave_results(world)) as brave:
        settings = {"search_backends": "brave", "brave_url": brave.url, "brave_api_key": KEY}
        async with stack(world, **settings) as s:
            s.llm.queue("judge", judge("sufficient"))
            events = await s.ask()
            ready = (await s.client.get("/readyz")).json()
    assert brave.queries == ["what causes tides"]
    assert s.searx.queries == []  # SearXNG is not a configured backend
    (done,) = of(events, "search.completed")
    assert done["backend"] == "brave"
    assert done["count"] == len(TOPICS)
    assert done["quota"]["monthly_limit"] == 2000
    assert done["quota"]["monthly_remaining"] == 1998
    assert ready["search"]["quota"]["brave"]["monthly_remaining"] == 1998
    assert status(events) == "answered"
    titles = [src["title"] for src in of(events, "sources")[0]["sources"]]
    assert "All about tides" in titles  # Brave's <strong> marks are gone


async def test_brave_errors_say_what_to_do(world: World) -> None:
    async with FakeBrave(brave_results(world)) as brave:
        settings = {"search_backends": "brave", "brave_url": brave.url, "allow_unsourced": False}
        async with stack(world, brave_api_key="wrong", **settings) as s:
            refused = await s.ask()
        async with stack(world, brave_api_key=KEY, **settings) as s:
            brave.monthly_remaining = 0
            spent = await s.ask()
    assert "BRAVE_API_KEY" in of(refused, "error")[0]["message"]
    message = of(spent, "error")[0]["message"]
    assert "monthly quota of 2000 requests is spent" in message
    assert "renews in 15.0 days" in message


async def test_429_rests_an_instance_and_fails_over_to_the_next(world: World) -> None:
    async with (
        FakeSearxng(results_for(world), mode="429") as limited,
        FakeSearxng(results_for(world)) as spare,
    ):
        urls = f"{limited.url},{spare.url}"
        async with stack(world, searxng_url=urls, search_cache_s=0) as s:
            first = await s.ask()
            second = await s.ask()
            ready = (await s.client.get("/readyz")).json()
    assert len(limited.queries) == 1  # asked once, answered 429, then rested
    assert len(spare.queries) == 2
    for events in (first, second):
        assert of(events, "search.completed")[0]["backend"] == f"searxng@{spare.url[7:]}"
        assert status(events) == "answered"
    assert list(ready["search"]["resting"]) == [f"searxng@{limited.url[7:]}"]


async def test_merge_mode_fuses_two_instances(world: World) -> None:
    only = {q: ["tides"] for q in ("what causes tides",)}
    other = {q: ["neap"] for q in ("what causes tides",)}
    async with (
        FakeSearxng(results_for(world, only)) as a,
        FakeSearxng(results_for(world, other)) as b,
        stack(world, searxng_url=f"{a.url},{b.url}", search_mode="merge") as s,
    ):
        events = await s.ask()
    (done,) = of(events, "search.completed")
    assert done["backend"].count("+") == 1
    assert set(of(events, "rank.completed")[0]["urls"]) == {
        f"{world.pages_url}/tides",
        f"{world.pages_url}/neap",
    }


async def test_repeated_query_is_served_from_the_cache_unless_turned_off(world: World) -> None:
    async with stack(world) as s:
        first = await s.ask()
        again = await s.ask()
        fresh = await s.ask(options={"search_cache": False})
    assert len(s.searx.queries) == 2  # the first and the uncached third
    assert [of(e, "search.completed")[0]["cached"] for e in (first, again, fresh)] == [
        False,
        True,
        False,
    ]
    assert status(again) == "answered"


async def test_recent_news_questions_are_routed_to_news_this_week(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue("plan", judge_plan("latest tides news"))
        events = await s.ask("What is the latest news about spring tides?")
    search = s.searx.searches[0]
    assert (search.query.get("categories"), search.query.get("time_range")) == ("news", "week")
    done = of(events, "search.completed")[0]
    assert (done["categories"], done["time_range"]) == ("news", "week")


async def test_a_routed_search_that_finds_nothing_is_repeated_as_asked(world: World) -> None:
    async with stack(world) as s:
        s.searx.results = lambda q: [] if len(s.searx.searches) == 1 else results_for(world)(q)
        events = await s.ask("python tides library")
    first, second = s.searx.searches[:2]
    assert first.query.get("categories") == "it"
    assert "categories" not in second.query
    assert status(events) == "answered"


async def test_captcha_blocked_engines_are_named_in_a_warning(world: World) -> None:
    async with stack(world) as s:
        s.searx.unresponsive = [("google", "CAPTCHA"), ("brave", "timeout")]
        events = await s.ask()
    (warning,) = [w for w in of(events, "warning") if w["code"] == "unresponsive_engines"]
    assert "google (CAPTCHA)" in warning["message"]
    assert "brave (timeout)" in warning["message"]
    assert "unresponsive_engines" in codes(events)


async def test_published_dates_reach_the_prompt_and_the_sources(world: World) -> None:
    async with stack(world) as s:
        tides = f"{world.pages_url}/tides"
        published = "2026-11-01T00:00:00"
        s.searx.results = [searx_result(tides, "t", TOPICS["tides"][:80], published=published)]
        s.llm.queue("judge", judge("sufficient"))
        events = await s.ask()
    (source,) = of(events, "sources")[0]["sources"]
    assert source["published"] == "2026-11-01T00:00:00"
    (synthesis,) = s.llm.calls_of("synthesis")
    prompt = "\n".join(m["content"] for m in synthesis.body["messages"])
    assert "Published: 2026-11-01T00:00:00" in prompt


def judge_plan(query: str) -> Say:
    """A plan reply that searches ``query``."""
    return Say.json(
        {
            "action": "proceed",
            "clarifying_question": None,
            "optimized_query": query,
            "history_sufficiency": "insufficient",
        }
    )
