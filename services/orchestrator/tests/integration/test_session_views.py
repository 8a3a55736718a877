"""What the web UI's sidebar and memory meter read from the sessions API (issue 27 item 1): a
research run's conversation is listed with ``type: research`` (so the UI lists the run once),
only to its owner; ``GET /v1/sessions/{id}`` carries the history budget the next question uses.
Real reader and ranker, SQLite (one test), the scripted SearXNG and LLM, over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from services.orchestrator.tests.integration.research_support import research_app
from services.orchestrator.tests.integration.support import World, judge, stack, world

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789ab"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def listed(body: dict[str, Any]) -> dict[str, str]:
    return {s["session_id"]: s["type"] for s in body["sessions"]}


@pytest.mark.parametrize("stored", [False, True], ids=["memory", "sqlite"])
async def test_a_research_runs_conversation_is_listed_as_research_to_its_owner_only(
    world: World, tmp_path: Path, stored: bool
) -> None:
    tokens = {"api_tokens": f"alice:{ALICE},bob:{BOB}", "research_max_evaluations": 0}
    async with research_app(world, tmp_path if stored else None, **tokens) as (api, _f):
        start = await api.client.post(
            "/v1/research",
            json={"query": "how do tides work", "session_id": "report-1"},
            headers=auth(ALICE),
        )
        run = start.json()["research_id"]
        await api.client.get(f"/v1/research/{run}/events", headers=auth(ALICE))
        chat = await api.client.post(
            "/v1/search",
            json={"query": "what causes tides", "session_id": "chat-1"},
            headers={"Accept": "application/json", **auth(ALICE)},
        )
        assert chat.status_code == 200, chat.text
        alice = (await api.client.get("/v1/sessions", headers=auth(ALICE))).json()
        bob = (await api.client.get("/v1/sessions", headers=auth(BOB))).json()
        runs = (await api.client.get("/v1/research", headers=auth(ALICE))).json()["runs"]
    assert listed(alice) == {"report-1": "research", "chat-1": "chat"}
    # the run names its conversation: the UI lists the pair once, by this id
    assert [r["session_id"] for r in runs] == ["report-1"]
    assert bob["sessions"] == []


async def test_a_session_shows_its_memory_meter(world: World) -> None:
    async with stack(world, history_chars=700) as s:
        for question in ("what causes tides", "and neap tides", "and spring tides"):
            s.llm.queue("judge", judge("sufficient"))
            await s.ask(question, session_id="long")
        session = (await s.client.get("/v1/sessions/long")).json()
        renamed = await s.client.patch("/v1/sessions/long", json={"title": "Tides"})
    memory = session["memory"]
    turns = session["turns"]
    assert memory["turns"] == 3
    assert memory["budget"] == 700
    assert memory["kept"] + memory["dropped"] == 3
    kept = turns[len(turns) - memory["kept"] :]
    assert memory["chars"] == sum(len(t["question"]) + len(t["answer"]) for t in kept)
    assert 0 < memory["chars"] <= 700
    assert memory["stored_chars"] >= memory["chars"]
    assert memory["stored_budget"] > 0
    assert renamed.json()["memory"] == memory
