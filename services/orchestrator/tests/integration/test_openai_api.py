"""The OpenAI-compatible endpoint through the official `openai` client, over real HTTP, against
the production wiring (real reader and ranker, scripted SearXNG and LLM)."""

from __future__ import annotations

import re
from typing import Any

import openai
import pytest

from services.orchestrator.tests.integration.support import (
    TOPICS,
    World,
    judge,
    serve_http,
    stack,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

FOOTNOTE = re.compile(r"^\[\^(\d+)\]: \[([^\]]*)\]\((\S+)\)$", re.MULTILINE)


def _client(base: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)


async def test_models_lists_search_and_research(world: World) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        models = await _client(base).models.list()
    assert {m.id for m in models.data} == {"quarry-search", "quarry-research"}


async def test_streamed_answer_has_footnoted_sources_and_progress(world: World) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        stream = await _client(base).chat.completions.create(
            model="quarry-search",
            messages=[{"role": "user", "content": "what causes tides"}],
            stream=True,
        )
        chunks = [chunk async for chunk in stream]
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
        for c in chunks
        if c.choices
    )
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop"
    sources: list[dict[str, Any]] = (final.model_extra or {})["sources"]
    assert {src["url"] for src in sources} <= {f"{world.pages_url}/{t}" for t in TOPICS}
    notes = {int(n): url for n, _, url in FOOTNOTE.findall(content)}
    assert notes == {src["n"]: src["url"] for src in sources}
    refs = {int(n) for n in re.findall(r"\[\^(\d+)\](?!:)", content)}
    assert refs, content
    assert refs <= set(notes)
    assert "Reading" in reasoning
    assert "Searched the web" in reasoning


async def test_non_streamed_answer_and_history_from_messages(world: World) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        reply = await _client(base).chat.completions.create(
            model="quarry-search",
            messages=[
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "tell me about the moon"},
                {"role": "assistant", "content": "The Moon orbits Earth [^1].\n\n[^1]: [M](u)"},
                {"role": "user", "content": [{"type": "text", "text": "what causes tides"}]},
            ],
        )
        plan_prompt = s.llm.calls_of("plan")[0].prompt
    content = reply.choices[0].message.content or ""
    assert FOOTNOTE.search(content)
    assert (reply.model_extra or {})["quarry"]["status"] == "answered"
    assert "tell me about the moon" in plan_prompt
    # the earlier answer reaches the planner as Quarry wrote it, without the footnote block
    assert "The Moon orbits Earth [1]." in plan_prompt
    assert "[^1]: [M](u)" not in plan_prompt


async def test_bad_requests_are_openai_errors(world: World) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        client = _client(base)
        with pytest.raises(openai.NotFoundError) as unknown:
            await client.chat.completions.create(
                model="gpt-4", messages=[{"role": "user", "content": "hi"}]
            )
        with pytest.raises(openai.BadRequestError) as last:
            await client.chat.completions.create(
                model="quarry-search", messages=[{"role": "assistant", "content": "hi"}]
            )
    assert "quarry-search" in unknown.value.message
    assert "last message must be a user message" in last.value.message
