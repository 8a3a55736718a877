"""Every sentence of an answer checked against its sources, through the real HTTP API and the
production wiring: the `answer.sentence` stream carries the checked text, `answer.completed`
the marks and the support score, the OpenAI-compatible stream the checked answer, and an answer
nothing supports says so plainly."""

from __future__ import annotations

import json

import httpx
import pytest

from services.orchestrator.tests.fakes.fake_llm import Say
from services.orchestrator.tests.integration.support import (
    World,
    judge,
    of,
    serve_http,
    stack,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

TRUE = "Tides are caused by the gravitational pull of the Moon and the Sun on the oceans"
FALSE = "Volcanic eruptions under the seabed double every tide in December"


async def test_each_sentence_is_checked_and_marked(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue("judge", judge("sufficient"))
        s.llm.queue("synthesis", Say(f"{TRUE} [7]. {FALSE} [1]."))
        events = await s.ask()
    sentences = of(events, "answer.sentence")
    (done,) = of(events, "answer.completed")
    # [7] named no source: the sentence streamed with the source that holds it instead
    assert sentences[0]["text"].startswith(TRUE)
    assert "[7]" not in sentences[0]["text"]
    assert sentences[0]["support"] == "supported"
    assert sentences[0]["citations"]
    # the unsupported sentence is never shown as cited
    assert sentences[1]["support"] == "unsupported"
    assert sentences[1]["citations"] == []
    assert "[" not in sentences[1]["text"]
    assert done["text"] == "".join(x["text"] for x in sentences)
    assert [x["support"] for x in done["sentences"]] == ["supported", "unsupported"]
    assert done["support_score"] == 0.5
    assert 7 in done["removed_citations"]


async def test_an_answer_nothing_supports_says_the_sources_dont_say(world: World) -> None:
    async with stack(world) as s:
        s.llm.queue("judge", judge("sufficient"))
        s.llm.queue("synthesis", Say(f"{FALSE} [1]."))
        events = await s.ask("what do volcanic eruptions do to tides")
    (done,) = of(events, "answer.completed")
    assert done["support_score"] == 0.0
    assert "The sources don't say." in done["text"]
    assert done["text"].startswith("The sources don't say.")
    assert done["sentences"][0]["support"] is None  # the engine's own note, not a claim


async def test_the_openai_stream_carries_the_checked_answer(world: World) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        s.llm.queue("judge", judge("sufficient"))
        s.llm.queue("synthesis", Say(f"{TRUE} [7]."))
        body = {
            "model": "quarry-search",
            "stream": True,
            "messages": [{"role": "user", "content": "what causes tides"}],
        }
        async with (
            httpx.AsyncClient(base_url=base, timeout=60) as client,
            client.stream("POST", "/v1/chat/completions", json=body) as reply,
        ):
            lines = [x async for x in reply.aiter_lines() if x.startswith("data: {")]
    chunks = [json.loads(x[len("data: ") :]) for x in lines]
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert content.startswith(TRUE)
    assert "[^7]" not in content
    assert "[^1]" in content
    final = chunks[-1]["quarry"]
    assert final["support_score"] == 1.0
    assert final["sentences"][0]["support"] == "supported"


async def test_code_is_never_given_a_citation(world: World) -> None:
    code = "```\ntides caused by the gravitational pull of the Moon\n```\n"
    async with stack(world) as s:
        s.llm.queue("judge", judge("sufficient"))
        s.llm.queue("synthesis", Say(f"{TRUE} [1].\n\n{code}"))
        events = await s.ask()
    (done,) = of(events, "answer.completed")
    assert code in done["text"]  # the code line shares the page's words, and stays as written
    assert done["sentences"][0]["support"] == "supported", done["sentences"]
