"""structured_call through a real provider and the fake LLM: parse, retry, default."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from orchestrator.adapters.llm.chat import LLMOptions
from orchestrator.adapters.llm.openai import OpenAIClient
from orchestrator.core.llm import LLMError, Message
from orchestrator.core.schemas import Judgement, Plan
from orchestrator.core.structured import (
    default_judgement,
    default_plan,
    parse_output,
    simple_schema,
    structured_call,
)

from services.orchestrator.tests.fakes.fake_llm import Fail, FakeLLM, Say

MESSAGES: list[Message] = [
    {"role": "system", "content": "Judge."},
    {"role": "user", "content": "Question: q"},
]
VALID = {"reasoning": "Source 1 gives it.", "sufficiency": "partial", "gap_queries": ["x y"]}


@pytest.fixture
async def setup() -> AsyncIterator[tuple[FakeLLM, OpenAIClient]]:
    async with FakeLLM() as fake, httpx.AsyncClient(trust_env=False) as http:
        yield fake, OpenAIClient(fake.url, http, LLMOptions(model="m"))


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node, *(n for v in node.values() for n in _walk(v))]
    if isinstance(node, list):
        return [n for v in node for n in _walk(v)]
    return []


def test_schema_is_simple_for_grammar_converters() -> None:
    for model in (Plan, Judgement):
        schema = simple_schema(model)
        assert list(schema["properties"]) == list(model.model_fields)  # reasoning-first order
        assert schema["required"] == list(model.model_fields)
        for node in _walk(schema):
            assert not isinstance(node.get("type"), list)
            assert node.get("maxLength", 0) <= 400
            assert "default" not in node
    nullable = simple_schema(Plan)["properties"]["clarifying_question"]
    assert nullable == {"anyOf": [{"maxLength": 300, "type": "string"}, {"type": "null"}]}


def test_parse_output_is_lenient_about_wrapping_but_not_content() -> None:
    raw = '<think>hm</think>Sure!\n```json\n{"reasoning": "a\nb", "sufficiency": "sufficient",'
    raw += ' "gap_queries": []}\n```'
    assert parse_output(raw, Judgement).reasoning == "a\nb"
    with pytest.raises(ValueError, match="sufficiency"):
        parse_output('{"sufficiency": "maybe"}', Judgement)
    with pytest.raises(ValueError, match="no JSON object"):
        parse_output("I think it is sufficient.", Judgement)


async def test_valid_first_time(setup: tuple[FakeLLM, OpenAIClient]) -> None:
    fake, llm = setup
    fake.queue("judge", Say.json(VALID))
    result = await structured_call(llm, MESSAGES, Judgement, default_judgement(), timeout=5)
    assert result.value == Judgement(**VALID)
    assert (result.attempts, result.used_default, result.error) == (1, False, None)


async def test_invalid_then_valid_retries_with_stricter_instruction(
    setup: tuple[FakeLLM, OpenAIClient],
) -> None:
    fake, llm = setup
    fake.queue("judge", Say("It is partial, I think."), Say.json(VALID))
    result = await structured_call(llm, MESSAGES, Judgement, default_judgement(), timeout=5)
    assert result.attempts == 2
    assert not result.used_default
    retry = fake.calls[1].messages
    assert retry[: len(MESSAGES)] == MESSAGES  # same prefix: the server's KV cache is reused
    assert retry[2] == {"role": "assistant", "content": "It is partial, I think."}
    assert "no JSON object" in retry[3]["content"]
    assert json.dumps(simple_schema(Judgement)) in retry[3]["content"]


async def test_invalid_twice_gives_the_safe_default(setup: tuple[FakeLLM, OpenAIClient]) -> None:
    fake, llm = setup
    fake.queue("plan", Say('{"action": "search"}'), Say('{"action": broken}'))
    result = await structured_call(llm, MESSAGES, Plan, default_plan(), timeout=5)
    assert result.used_default
    assert result.value.action == "proceed"
    assert result.value.optimized_query is None
    assert result.attempts == 2
    assert result.error is not None
    assert "not valid JSON" in result.error


async def test_llm_error_is_not_swallowed(setup: tuple[FakeLLM, OpenAIClient]) -> None:
    fake, llm = setup
    fake.queue("judge", Fail(500, "boom"))
    with pytest.raises(LLMError, match="boom"):
        await structured_call(llm, MESSAGES, Judgement, default_judgement(), timeout=5)
    assert default_judgement().sufficiency == "insufficient"
    assert default_judgement().gap_queries == []
