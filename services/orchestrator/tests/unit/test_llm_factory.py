"""build_llm: provider choice, settings wiring, system folding, stream endings."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from orchestrator.adapters.llm.chat import LLMOptions, fold_system
from orchestrator.adapters.llm.factory import build_llm
from orchestrator.adapters.llm.ollama import OllamaClient
from orchestrator.adapters.llm.openai import OpenAIClient
from orchestrator.config import Settings
from orchestrator.core.llm import LLMError, Message

from services.orchestrator.tests.fakes.fake_llm import FakeLLM, Say

MESSAGES: list[Message] = [
    {"role": "system", "content": "Rules."},
    {"role": "user", "content": "Question: q"},
]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


async def test_build_llm_picks_the_provider_and_wires_settings(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_PROVIDER", "ollama")
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:11434")
    monkeypatch.setenv("LLM_NUM_CTX", "4096")
    ollama = build_llm(Settings(), http)
    assert isinstance(ollama, OllamaClient)
    assert ollama.base_url == "http://127.0.0.1:11434"
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.setenv("LLM_SCHEMA_DIALECT", "json_object")
    openai = build_llm(Settings(), http)
    assert isinstance(openai, OpenAIClient)
    assert openai.dialect == "json_object"


async def test_fold_system_sends_one_user_turn(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fold_system(MESSAGES) == [{"role": "user", "content": "Rules.\n\nQuestion: q"}]
    async with FakeLLM() as fake:
        monkeypatch.setenv("LLM_BASE_URL", fake.url)
        monkeypatch.setenv("LLM_FOLD_SYSTEM", "true")
        llm = build_llm(Settings(), http)
        await llm.complete_json(MESSAGES, {"type": "object"}, timeout=5)
    assert fake.calls[0].messages == [{"role": "user", "content": "Rules.\n\nQuestion: q"}]


async def test_stream_end_without_terminator(http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.omit_stream_end = True
        fake.queue("synthesis", Say("Done [1]."), Say("Cut [1]."))
        # OpenAI: finish_reason was sent, so a body that ends there is a complete answer
        openai = OpenAIClient(fake.url, http, LLMOptions(model="m"))
        assert "".join([d async for d in openai.stream_chat(MESSAGES, timeout=5)]) == "Done [1]."
        ollama = OllamaClient(fake.url, http, LLMOptions(model="m"))
        with pytest.raises(LLMError, match="ended the stream before the answer was complete"):
            [d async for d in ollama.stream_chat(MESSAGES, timeout=5)]
