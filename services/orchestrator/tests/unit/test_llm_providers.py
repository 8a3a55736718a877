"""Both providers against the scripted fake over real HTTP: errors, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Literal

import httpx
import pytest
from orchestrator.adapters.llm.chat import HttpChatClient, LLMOptions
from orchestrator.adapters.llm.ollama import OllamaClient
from orchestrator.adapters.llm.openai import OpenAIClient
from orchestrator.core.llm import LLMError, Message

from services.orchestrator.tests.fakes.fake_llm import (
    Drop,
    Fail,
    FakeLLM,
    Garbage,
    Hang,
    Say,
    StreamError,
)

Wire = Literal["ollama", "openai"]
WIRES: list[Wire] = ["ollama", "openai"]
MESSAGES: list[Message] = [{"role": "user", "content": "Question: why is the sky blue"}]
SCHEMA = {"type": "object", "properties": {"sufficiency": {"type": "string"}}}
FAST = LLMOptions(
    model="m", timeout_s=5, first_token_timeout_s=5, idle_timeout_s=5, connect_timeout_s=2
)


def make(wire: Wire, url: str, http: httpx.AsyncClient, **changes: object) -> HttpChatClient:
    options = replace(FAST, **changes)  # type: ignore[arg-type]  # test-only field overrides
    cls = OllamaClient if wire == "ollama" else OpenAIClient
    return cls(url, http, options)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


async def collect(stream: AsyncIterator[str], into: list[str] | None = None) -> list[str]:
    got = [] if into is None else into
    async for delta in stream:
        got.append(delta)
    return got


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("wire", WIRES)
async def test_stream_yields_deltas_and_strips_split_think_tags(
    wire: Wire, http: httpx.AsyncClient
) -> None:
    async with FakeLLM() as fake:
        tokens = ["<th", "ink>plan: cite [2]</thi", "nk>\n\n", "Blue ", "light [1]", "."]
        fake.queue("synthesis", Say(tokens=tokens))
        deltas = await collect(make(wire, fake.url, http).stream_chat(MESSAGES, timeout=5))
    assert "".join(deltas) == "Blue light [1]."
    assert fake.calls[0].stream is True


@pytest.mark.parametrize("wire", WIRES)
async def test_structured_call_returns_text_without_think(
    wire: Wire, http: httpx.AsyncClient
) -> None:
    async with FakeLLM() as fake:
        fake.queue("judge", Say('<think>hmm</think>\n{"sufficiency": "partial"}'))
        text = await make(wire, fake.url, http).complete_json(MESSAGES, SCHEMA, timeout=5)
    assert text == '{"sufficiency": "partial"}'
    assert fake.calls[0].schema == SCHEMA


@pytest.mark.parametrize("wire", WIRES)
async def test_connection_refused_names_the_url(wire: Wire, http: httpx.AsyncClient) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    llm = make(wire, url, http)
    with pytest.raises(LLMError, match="cannot connect") as err:
        await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
    assert url in str(err.value)
    assert err.value.url == url
    with pytest.raises(LLMError, match="cannot connect"):
        await collect(llm.stream_chat(MESSAGES, timeout=5))
    assert await llm.ping(timeout=1) is False


@pytest.mark.parametrize("wire", WIRES)
async def test_http_500_carries_status_and_detail(wire: Wire, http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.queue("any", Fail(500, "model not loaded"), Fail(503, "overloaded"))
        llm = make(wire, fake.url, http)
        with pytest.raises(LLMError, match="HTTP 500: model not loaded"):
            await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
        with pytest.raises(LLMError, match="HTTP 503: overloaded"):
            await collect(llm.stream_chat(MESSAGES, timeout=5))


@pytest.mark.parametrize("wire", WIRES)
async def test_error_inside_stream_and_malformed_frames(
    wire: Wire, http: httpx.AsyncClient
) -> None:
    async with FakeLLM() as fake:
        fake.queue("synthesis", StreamError("out of memory", after_tokens=2), Garbage(1))
        fake.queue("judge", Garbage())
        llm = make(wire, fake.url, http)
        with pytest.raises(LLMError, match="out of memory"):
            await collect(llm.stream_chat(MESSAGES, timeout=5))
        with pytest.raises(LLMError, match="malformed"):
            await collect(llm.stream_chat(MESSAGES, timeout=5))
        with pytest.raises(LLMError, match="malformed"):  # structured calls are streamed too
            await llm.complete_json(MESSAGES, SCHEMA, timeout=5)


@pytest.mark.parametrize("wire", WIRES)
async def test_dropped_stream_is_an_llm_error(wire: Wire, http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.queue("synthesis", Drop(after_tokens=2))
        got: list[str] = []
        with pytest.raises(LLMError, match="closed the connection"):
            await collect(make(wire, fake.url, http).stream_chat(MESSAGES, timeout=5), got)
    assert len(got) == 2


@pytest.mark.parametrize("wire", WIRES)
async def test_own_timeouts_raise_llm_error_but_caller_budget_raises_timeout(
    wire: Wire, http: httpx.AsyncClient
) -> None:
    async with FakeLLM() as fake:
        llm = make(wire, fake.url, http, timeout_s=0.2, first_token_timeout_s=0.2)
        fake.queue("any", Hang(), Hang(), Hang(after_tokens=0))
        with pytest.raises(LLMError, match=r"within 0\.2 s"):
            await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
        with pytest.raises(TimeoutError):
            await llm.complete_json(MESSAGES, SCHEMA, timeout=0.1)
        with pytest.raises(LLMError, match="first token"):
            await collect(llm.stream_chat(MESSAGES, timeout=5))
        # Not "in_flight == 0" alone: on a busy box the client can give up on the third
        # request before the fake has even registered it, when nothing is in flight yet.
        await fake.wait_until(lambda: fake.disconnects == 3 and fake.in_flight == 0, timeout=30)


@pytest.mark.parametrize("wire", WIRES)
async def test_idle_timeout_after_some_tokens(wire: Wire, http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.queue("synthesis", Hang(after_tokens=2))
        got: list[str] = []
        llm = make(wire, fake.url, http, idle_timeout_s=0.2)
        with pytest.raises(LLMError, match=r"no token for 0\.2 s"):
            await collect(llm.stream_chat(MESSAGES, timeout=5), got)
        assert len(got) == 2


@pytest.mark.parametrize("wire", WIRES)
async def test_closing_the_stream_disconnects_the_server(
    wire: Wire, http: httpx.AsyncClient
) -> None:
    async with FakeLLM(token_delay=0.02) as fake:
        fake.queue("synthesis", Say("word " * 200))
        stream = make(wire, fake.url, http).stream_chat(MESSAGES, timeout=5)
        assert isinstance(stream, AsyncIterator)
        first = await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]  # an async generator
        await fake.wait_until(lambda: fake.cancelled_streams == 1, timeout=30)
    assert first == "word "
    assert fake.calls[0].outcome == "disconnected"


@pytest.mark.parametrize("wire", WIRES)
async def test_cancelling_the_consumer_cancels_the_stream(
    wire: Wire, http: httpx.AsyncClient
) -> None:
    async with FakeLLM(token_delay=0.05) as fake:
        fake.queue("synthesis", Say("word " * 200))
        started = asyncio.Event()

        async def consume() -> None:
            async for _ in make(wire, fake.url, http).stream_chat(MESSAGES, timeout=5):
                started.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(started.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await fake.wait_until(lambda: fake.cancelled_streams == 1, timeout=30)
        assert fake.in_flight == 0


@pytest.mark.parametrize("wire", WIRES)
async def test_reasoning_fields_are_hidden_but_count_as_progress(
    wire: Wire, http: httpx.AsyncClient
) -> None:
    # The 10 reasoning deltas take at least 2 s (their delays add up), past the 1 s first-token
    # limit, so the answer arrives after it; each gap is far below idle. The first delta only has
    # to arrive within that 1 s, not within a sliver of it (0.25 s limit, 0.06 s delay before).
    async with FakeLLM(token_delay=0.2) as fake:
        fake.queue("synthesis", Say("Answer [1].", reasoning=["step "] * 10))
        llm = make(wire, fake.url, http, first_token_timeout_s=1.0, idle_timeout_s=10)
        text = "".join(await collect(llm.stream_chat(MESSAGES, timeout=10)))
    assert text == "Answer [1]."


@pytest.mark.parametrize("wire", WIRES)
async def test_ping(wire: Wire, http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        llm = make(wire, fake.url, http)
        assert await llm.ping(timeout=1) is True
        fake.models_status = 500
        assert await llm.ping(timeout=1) is False
    expected = "/api/tags" if wire == "ollama" else "/v1/models"
    assert [r.path for r in fake.requests] == [expected, expected]


async def test_unset_base_url_is_a_clear_error(http: httpx.AsyncClient) -> None:
    llm = make("openai", "", http)
    with pytest.raises(LLMError, match="LLM_BASE_URL"):
        await llm.complete_json(MESSAGES, SCHEMA, timeout=1)
    assert await llm.ping(timeout=1) is False
