"""OpenAI-compatible wire format: dialects, auth, base URLs, the json_schema fallback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from orchestrator.adapters.llm.chat import LLMOptions, SchemaDialect
from orchestrator.adapters.llm.openai import OpenAIClient
from orchestrator.core.llm import LLMError, Message

from services.orchestrator.tests.fakes.fake_llm import Fail, FakeLLM, Say

MESSAGES: list[Message] = [{"role": "user", "content": "Question: hi"}]
SCHEMA = {"title": "Judgement", "type": "object", "properties": {"sufficiency": {}}}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (
            "json_schema",
            {
                "type": "json_schema",
                "json_schema": {"name": "Judgement", "schema": SCHEMA, "strict": True},
            },
        ),
        ("json_object", {"type": "json_object", "schema": SCHEMA}),
        ("none", None),
    ],
)
async def test_schema_dialects(
    dialect: SchemaDialect, expected: object, http: httpx.AsyncClient
) -> None:
    async with FakeLLM() as fake:
        llm = OpenAIClient(fake.url, http, LLMOptions(model="m", schema_dialect=dialect))
        await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
    body = fake.calls[0].body
    assert body.get("response_format") == expected
    assert body["stream"] is True  # streamed, so the first-token deadline applies
    assert body["temperature"] == 0.0


async def test_llama_cpp_python_rejection_falls_back_to_json_object_once(
    http: httpx.AsyncClient,
) -> None:
    async with FakeLLM(reject_json_schema=True) as fake:
        llm = OpenAIClient(fake.url, http, LLMOptions(model="m"))
        first = await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
        await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
    formats = [c.body["response_format"]["type"] for c in fake.calls]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert llm.dialect == "json_object"
    assert "sufficient" in first


async def test_strict_mode_refusal_falls_back_to_non_strict_json_schema(
    http: httpx.AsyncClient,
) -> None:
    async with FakeLLM(reject_strict_keywords=True) as fake:
        llm = OpenAIClient(fake.url, http, LLMOptions(model="m"))
        await llm.complete_json(MESSAGES, {**SCHEMA, "maxLength": 5}, timeout=5)
        await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
    strict = [c.body["response_format"]["json_schema"]["strict"] for c in fake.calls]
    assert strict == [True, False, False]
    assert llm.dialect == "json_schema"


async def test_other_http_errors_do_not_switch_dialect(http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.queue("judge", Fail(500, "CUDA out of memory"))
        llm = OpenAIClient(fake.url, http, LLMOptions(model="m"))
        with pytest.raises(LLMError, match="CUDA out of memory"):
            await llm.complete_json(MESSAGES, SCHEMA, timeout=5)
    assert llm.dialect == "json_schema"
    assert len(fake.calls) == 1


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_base_url_with_or_without_v1_and_bearer(suffix: str, http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        fake.queue("synthesis", Say("Fine [1]."))
        llm = OpenAIClient(fake.url + suffix, http, LLMOptions(model="m", api_key="sk-test"))
        text = "".join([d async for d in llm.stream_chat(MESSAGES, timeout=5)])
        assert await llm.ping(timeout=2)
    assert text == "Fine [1]."
    assert [r.path for r in fake.requests] == ["/v1/chat/completions", "/v1/models"]
    assert all(r.headers["authorization"] == "Bearer sk-test" for r in fake.requests)


async def test_no_authorization_header_without_key(http: httpx.AsyncClient) -> None:
    async with FakeLLM() as fake:
        await OpenAIClient(fake.url, http, LLMOptions(model="m")).ping(timeout=2)
    assert "authorization" not in fake.requests[0].headers


@pytest.mark.parametrize("tools", [False, True], ids=["answers", "tool-calls"])
async def test_one_sse_line_parser_for_answers_and_tool_calls(
    tools: bool, http: httpx.AsyncClient
) -> None:
    # The tool-call stream reuses the answer stream's framing (OpenAIClient._event): comments,
    # other SSE fields, [DONE] and malformed or error events read the same in both.
    from orchestrator.adapters.llm.tools import _ToolStream

    kind = _ToolStream if tools else OpenAIClient
    client = kind("http://127.0.0.1:9/v1", http, LLMOptions(model="m"))
    url = "http://127.0.0.1:9/v1/chat/completions"
    for line in (": ping - 2026-11-27 10:00:00", "event: message", "id: 3", "retry: 100"):
        assert client._parse_line(line, url) == ("", "more")
    assert client._parse_line("data: [DONE]", url) == ("", "done")
    chunk = '{"choices": [{"delta": {"content": "hi"}, "finish_reason": null}]}'
    assert client._parse_line(f"data: {chunk}", url) == ("hi", "more")
    for bad in ("data: not json", "data: [1, 2]", 'data: {"error": {"message": "overloaded"}}'):
        with pytest.raises(LLMError):
            client._parse_line(bad, url)


async def test_repeat_penalty_is_sent_only_when_set(http: httpx.AsyncClient) -> None:
    # llama.cpp's servers read "repeat_penalty" (default 1.1); other servers never see it.
    async with FakeLLM() as fake:
        fake.queue("synthesis", Say("One [1]."))
        fake.queue("synthesis", Say("Two [1]."))
        plain = OpenAIClient(fake.url, http, LLMOptions(model="m"))
        set_ = OpenAIClient(fake.url, http, LLMOptions(model="m", repeat_penalty=1.0))
        for llm in (plain, set_):
            assert "".join([d async for d in llm.stream_chat(MESSAGES, timeout=5)])
        await set_.complete_json(MESSAGES, SCHEMA, timeout=5)
    bodies = [c.body for c in fake.calls]
    assert "repeat_penalty" not in bodies[0]
    assert bodies[1]["repeat_penalty"] == 1.0
    assert bodies[2]["repeat_penalty"] == 1.0
    assert bodies[2]["temperature"] == 0.0
