"""Self-tests of the scripted fakes with a bare httpx client (the wire format they speak)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from services.orchestrator.tests.fakes.fake_llm import Drop, FakeLLM, Hang, Say
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result

PLAN_SCHEMA = {"type": "object", "properties": {"history_sufficiency": {}, "action": {}}}


async def test_ollama_ndjson_stream_and_tags() -> None:
    async with FakeLLM() as llm, httpx.AsyncClient(base_url=llm.url) as http:
        llm.queue("synthesis", Say("Paris is the capital [1]."))
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        async with http.stream("POST", "/api/chat", json=body) as resp:
            lines = [json.loads(line) async for line in resp.aiter_lines() if line]
        assert resp.headers["content-type"] == "application/x-ndjson"
        assert "".join(x["message"]["content"] for x in lines) == "Paris is the capital [1]."
        assert [x["done"] for x in lines][-2:] == [False, True]
        tags = (await http.get("/api/tags")).json()
        assert tags["models"][0]["name"] == "fake-model"
        assert llm.calls[0].kind == "synthesis"
        assert llm.in_flight == 0


async def test_openai_sse_has_ping_and_done_and_structured_default() -> None:
    async with FakeLLM() as llm, httpx.AsyncClient(base_url=llm.url) as http:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
        async with http.stream("POST", "/v1/chat/completions", json=body) as resp:
            raw = [line async for line in resp.aiter_lines()]
        assert raw[0].startswith(": ping")
        assert raw[-2:] == ["data: [DONE]", ""]
        fmt = {"type": "json_schema", "json_schema": {"name": "p", "schema": PLAN_SCHEMA}}
        plan = {
            "model": "m",
            "response_format": fmt,
            "messages": [{"role": "user", "content": "Question: what is x"}],
        }
        reply = (await http.post("/v1/chat/completions", json=plan)).json()
        content = json.loads(reply["choices"][0]["message"]["content"])
        assert content["action"] == "proceed"
        assert content["optimized_query"] == "what is x"


async def test_client_disconnect_is_counted() -> None:
    async with FakeLLM(token_delay=0.02) as llm, httpx.AsyncClient(base_url=llm.url) as http:
        llm.queue("any", Say("one two three four five six seven eight nine ten " * 5))
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        async with http.stream("POST", "/api/chat", json=body) as resp:
            async for _ in resp.aiter_lines():
                break
        await llm.wait_until(lambda: llm.cancelled_streams == 1 and llm.in_flight == 0)
        assert llm.calls[0].outcome == "disconnected"


async def test_drop_and_hang() -> None:
    async with FakeLLM() as llm, httpx.AsyncClient(base_url=llm.url, timeout=0.3) as http:
        llm.queue("any", Drop(after_tokens=2), Hang())
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        with pytest.raises(httpx.RemoteProtocolError):
            await _drain(http, body)
        with pytest.raises(httpx.ReadTimeout):
            await http.post("/api/chat", json=body)
        await llm.wait_until(lambda: llm.disconnects == 1)
        assert [c.outcome for c in llm.calls] == ["dropped", "disconnected"]


async def _drain(http: httpx.AsyncClient, body: Any) -> None:
    async with http.stream("POST", "/api/chat", json=body) as resp:
        async for _ in resp.aiter_lines():
            pass


async def test_searxng_shape_and_failure_modes() -> None:
    hits = [searx_result("https://a.test/x", "A", "about a")]
    async with FakeSearxng(hits) as sx, httpx.AsyncClient(base_url=sx.url, timeout=0.3) as http:
        sx.unresponsive = [("brave", "timeout")]
        page = (await http.get("/search", params={"q": "a b", "format": "json"})).json()
        assert page["results"][0]["url"] == "https://a.test/x"
        assert page["unresponsive_engines"] == [["brave", "timeout"]]
        assert (await http.get("/search", params={"q": "a"})).status_code == 403
        sx.fail_next("500", "hang")
        assert (await http.get("/search", params={"q": "a", "format": "json"})).status_code == 500
        with pytest.raises(httpx.ReadTimeout):
            await http.get("/search", params={"q": "a", "format": "json"})
        assert sx.queries == ["a b", "a", "a", "a"]
