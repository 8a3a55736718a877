"""Ollama's native wire format: what the provider sends to /api/chat."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from orchestrator.adapters.llm.chat import LLMOptions
from orchestrator.adapters.llm.ollama import OllamaClient
from orchestrator.core.llm import Message

from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Say

MESSAGES: list[Message] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Question: hi"},
]
SCHEMA = {"type": "object", "properties": {"action": {"type": "string"}}}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


async def test_structured_body_sends_schema_num_ctx_and_keep_alive(
    http: httpx.AsyncClient,
) -> None:
    async with FakeLLM() as fake:
        llm = OllamaClient(fake.url + "/api/", http, LLMOptions(model="qwen", keep_alive="3m"))
        text = await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
    body = fake.calls[0].body
    assert fake.requests[0].path == "/api/chat"
    assert body["format"] == SCHEMA
    assert body["stream"] is True  # streamed, so the first-token deadline applies
    assert body["keep_alive"] == "3m"
    assert body["options"]["num_ctx"] == 8192
    assert body["options"]["temperature"] == 0.0
    assert body["messages"] == MESSAGES
    assert '"action": "proceed"' in text


async def test_stream_body_and_text(http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.queue("synthesis", Say("Hello there [1]."))
        llm = OllamaClient(fake.url, http, LLMOptions(model="qwen", num_ctx=4096, max_tokens=99))
        text = "".join([d async for d in llm.stream_chat(MESSAGES, timeout=5)])
    body = fake.calls[0].body
    assert text == "Hello there [1]."
    assert body["stream"] is True
    assert "format" not in body
    assert body["options"] == {"num_ctx": 4096, "temperature": 0.2, "num_predict": 99}


async def test_numeric_keep_alive_is_sent_as_seconds(http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        llm = OllamaClient(fake.url, http, LLMOptions(model="qwen", keep_alive="-1"))
        await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
    assert fake.calls[0].body["keep_alive"] == -1.0


async def test_repeat_penalty_is_sent_only_when_set(http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.queue("synthesis", Say("One [1]."))
        fake.queue("synthesis", Say("Two [1]."))
        plain = OllamaClient(fake.url, http, LLMOptions(model="qwen"))
        set_ = OllamaClient(fake.url, http, LLMOptions(model="qwen", repeat_penalty=1.0))
        for llm in (plain, set_):
            assert "".join([d async for d in llm.stream_chat(MESSAGES, timeout=5)])
        await set_.complete_json(MESSAGES, SCHEMA, timeout=5)
    options = [c.body["options"] for c in fake.calls]
    assert "repeat_penalty" not in options[0]  # Ollama's own default applies
    assert options[1]["repeat_penalty"] == 1.0
    assert options[2]["repeat_penalty"] == 1.0  # decisions too
