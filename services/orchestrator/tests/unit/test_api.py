"""The HTTP API over ASGI: formats, sessions, readiness and every kind of bad input."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from orchestrator.app import create_app
from orchestrator.config import Settings
from orchestrator.core.schemas import Judgement
from orchestrator.wiring.runtime import Probe, Runtime, session_store

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import Harness, harness

URLS = [f"http://site{i}.test/" for i in range(4)]
PAGES = {
    u: (f"T{i}", f"Quarry page {i} says Quarry is an answer engine.") for i, u in enumerate(URLS)
}
PROBLEM = "application/problem+json"


def app_for(h: Harness, probes: dict[str, Probe] | None = None) -> FastAPI:
    """The real app, with the harness's dependencies injected into its lifespan."""

    @asynccontextmanager
    async def runtime(settings: Settings) -> AsyncIterator[Runtime]:
        yield Runtime(h.deps, session_store(settings), probes or {})

    return create_app(h.settings, runtime)


@asynccontextmanager
async def client(
    probes: dict[str, Probe] | None = None, **kwargs: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, Harness]]:
    """An ASGI client for an app over fresh doubles."""
    kwargs.setdefault("searcher", ScriptedSearcher(default=hits(*URLS, words="quarry")))
    kwargs.setdefault("pages", PAGES)
    async with harness(**kwargs) as h:
        app = app_for(h, probes)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                yield c, h


def parse_sse(text: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(id, event, data) per SSE frame; keep-alive comments (sent while a slow run, e.g. on a
    loaded machine, is quiet for ORCHESTRATOR_KEEPALIVE_S) are not frames."""
    frames = []
    for block in text.strip().split("\n\n"):
        if all(line.startswith(":") for line in block.splitlines()):
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        frames.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
    return frames


async def test_sse_is_the_default_stream() -> None:
    async with client(brain=ScriptedBrain(judgements=[Judgement(sufficiency="sufficient")])) as (
        c,
        _,
    ):
        reply = await c.post("/v1/search", json={"query": "what is quarry"})
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    frames = parse_sse(reply.text)
    assert [f[0] for f in frames] == list(range(len(frames)))
    assert frames[0][1] == "run.started"
    assert frames[0][2]["api_version"] == "1"
    assert frames[-1][1] == "run.completed"
    assert frames[-1][2]["status"] == "answered"


async def test_ndjson_on_request() -> None:
    async with client() as (c, _):
        reply = await c.post(
            "/v1/search",
            json={"query": "what is quarry", "options": {"max_rounds": 1}},
            headers={"Accept": "application/x-ndjson"},
        )
    assert reply.headers["content-type"].startswith("application/x-ndjson")
    events = [json.loads(line) for line in reply.text.splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert {"seq", "type", "data"} == set(events[0])
    types = [e["type"] for e in events]
    assert types.index("sources") < types.index("answer.delta") < types.index("answer.completed")
    assert events[-1]["data"]["rounds"] == 1


async def test_json_result_and_session_round_trip() -> None:
    async with client() as (c, _h):
        reply = await c.post(
            "/v1/search",
            json={"query": "what is quarry", "session_id": "conv-1"},
            headers={"Accept": "application/json"},
        )
        result = reply.json()
        assert reply.status_code == 200
        assert result["status"] == "answered"
        assert result["session_id"] == "conv-1"
        assert result["answer"].startswith("Quarry is an answer engine [1]")
        assert result["sources"][0]["n"] == 1
        assert result["stats"]["pages_read"] == 4
        session = (await c.get("/v1/sessions/conv-1")).json()
        assert [t["question"] for t in session["turns"]] == ["what is quarry"]
        assert session["turns"][0]["sources"] == result["sources"]
        assert (await c.delete("/v1/sessions/conv-1")).status_code == 204
        gone = await c.get("/v1/sessions/conv-1")
    assert gone.status_code == 404
    assert gone.headers["content-type"] == PROBLEM
    assert gone.json()["status"] == 404


async def test_requests_on_one_session_are_serialised() -> None:
    seen: list[int] = []
    brain = ScriptedBrain(token_delay=0.02)
    original = brain.plan

    async def plan(question: str, history: Any, *, timeout: float) -> Any:
        seen.append(len(history))
        return await original(question, history, timeout=timeout)

    brain.plan = plan  # type: ignore[method-assign]
    async with client(brain=brain) as (c, _):
        body = {"query": "what is quarry", "session_id": "same"}
        headers = {"Accept": "application/json"}
        replies = await asyncio.gather(
            *(c.post("/v1/search", json=body, headers=headers) for _ in range(3))
        )
    assert [r.json()["status"] for r in replies] == ["answered"] * 3
    assert seen == [0, 1, 2]


BAD_INPUTS: list[tuple[str, Callable[[], dict[str, Any]], int, str]] = [
    ("empty query", lambda: {"json": {"query": ""}}, 422, "query"),
    ("2001 chars", lambda: {"json": {"query": "x" * 2001}}, 422, "query"),
    ("missing query", lambda: {"json": {"session_id": "a"}}, 422, "query"),
    ("unknown option", lambda: {"json": {"query": "q", "options": {"x": 1}}}, 422, "options.x"),
    ("bad session id", lambda: {"json": {"query": "q", "session_id": "../x"}}, 422, "session_id"),
    (
        "malformed JSON",
        lambda: {"content": b'{"query": ', "headers": {"Content-Type": "application/json"}},
        400,
        "not valid JSON",
    ),
    (
        "wrong content type",
        lambda: {"content": b"query=x", "headers": {"Content-Type": "text/plain"}},
        415,
        "application/json",
    ),
    (
        "65 KB body",
        lambda: {"json": {"query": "q", "pad": "x" * 65 * 1024}},
        413,
        "larger than 65536",
    ),
    (
        "not acceptable",
        lambda: {"json": {"query": "q"}, "headers": {"Accept": "text/html"}},
        406,
        "Accept",
    ),
]


@pytest.mark.parametrize(
    ("case", "kwargs", "status", "detail"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS]
)
async def test_bad_input_is_a_problem(
    case: str, kwargs: Callable[[], dict[str, Any]], status: int, detail: str
) -> None:
    async with client() as (c, h):
        reply = await c.post("/v1/search", **kwargs())
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"] == PROBLEM
    problem = reply.json()
    assert problem["status"] == status
    assert detail in problem["detail"]
    assert "Traceback" not in reply.text
    assert h.searcher.queries == []


async def test_chunked_oversized_body_is_refused_while_streaming() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b'{"query": "q", "pad": "'
        for _ in range(70):
            yield b"x" * 1024
        yield b'"}'

    async with client() as (c, h):
        reply = await c.post(
            "/v1/search", content=body(), headers={"Content-Type": "application/json"}
        )
    assert reply.status_code == 413
    assert reply.headers["content-type"] == PROBLEM
    assert h.searcher.queries == []


async def test_unknown_route_and_method_are_problems() -> None:
    async with client() as (c, _):
        missing = await c.get("/v2/search")
        method = await c.get("/v1/search")
        bad_id = await c.get("/v1/sessions/a%20b")
    assert (missing.status_code, missing.headers["content-type"]) == (404, PROBLEM)
    assert (method.status_code, method.headers["content-type"]) == (405, PROBLEM)
    assert method.json()["detail"] == "GET is not allowed on /v1/search."
    assert bad_id.status_code == 422


async def test_an_unexpected_error_is_a_generic_500_problem() -> None:
    async with harness() as h:
        app = app_for(h)

        @app.get("/boom")
        async def boom() -> None:
            raise RuntimeError("secret internals")

        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                reply = await c.get("/boom")
    assert reply.status_code == 500
    assert reply.headers["content-type"] == PROBLEM
    assert "secret" not in reply.text
    assert "Traceback" not in reply.text


async def test_readyz_names_what_is_down_and_does_not_hang() -> None:
    async def up(_: float) -> bool:
        return True

    async def down(_: float) -> bool:
        return False

    async def hangs(_: float) -> bool:
        await asyncio.sleep(3600)
        return True

    async def broken(_: float) -> bool:
        raise ConnectionError("nope")

    probes: dict[str, Probe] = {"reader": up, "ranker": down, "searxng": hangs, "llm": broken}
    async with client(probes=probes, ready_timeout_s=0.2) as (c, _):
        reply = await asyncio.wait_for(c.get("/readyz"), 5)
        health = await c.get("/healthz")
    assert reply.status_code == 503
    body = reply.json()
    assert {k: body[k] for k in ("status", "down")} == {
        "status": "unavailable",
        "down": ["ranker", "searxng", "llm"],
    }
    # The LLM not answering is most often the embedded model still loading: say so.
    assert "loading" in body["detail"]
    assert body["web_search"] == "on"
    assert health.json() == {"status": "ok"}


async def test_openapi_documents_v1() -> None:
    async with client() as (c, _):
        spec = (await c.get("/openapi.json")).json()
    assert {"/v1/search", "/v1/sessions/{session_id}", "/healthz", "/readyz"} <= set(spec["paths"])
    search = spec["paths"]["/v1/search"]["post"]
    assert {"200", "413", "415", "422"} <= set(search["responses"])
    assert "SearchRequest" in json.dumps(search["requestBody"])
