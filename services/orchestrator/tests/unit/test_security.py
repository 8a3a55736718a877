"""Access control over ASGI: the Host allow-list, CORS, bearer tokens and rate limits, on every
route the app has (new routes are covered without touching this file)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from orchestrator.api.shared.ratelimit import PERSONAL, SHARED, resolve
from orchestrator.api.shared.security import ConfigError, allowed_hosts, check_bind, load_tokens
from orchestrator.config import Settings
from orchestrator.core.schemas import Judgement
from starlette.routing import Route

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import harness
from services.orchestrator.tests.unit.test_api import PAGES, PROBLEM, URLS, app_for

BEARER = "correct-horse-battery-staple"
# the health probes, and the web UI's page (it holds no data and asks for the token itself)
OPEN = {"/healthz", "/readyz", "/"}


def endpoints(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, path) for every route of the app, path parameters filled in.

    The OpenAPI schema lists every API route (included routers too); the plain routes add the
    documentation pages, which the schema leaves out.
    """
    found = {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    found |= {(m, r.path) for r in app.routes if isinstance(r, Route) for m in r.methods or ()}
    for method, path in sorted(found):
        if method != "HEAD":
            yield method, re.sub(r"\{[^}]+\}", "abc", path)


@asynccontextmanager
async def api(**settings: Any) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The real app over doubles, and an ASGI client that sends ``Host: localhost``."""
    brain = ScriptedBrain(judgements=[Judgement(sufficiency="sufficient")] * 20)
    searcher = ScriptedSearcher(default=hits(*URLS, words="quarry"))
    async with harness(pages=PAGES, brain=brain, searcher=searcher, **settings) as h:
        app = app_for(h)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                yield app, c


async def _call(c: httpx.AsyncClient, method: str, path: str, **kw: Any) -> httpx.Response:
    if method == "POST":
        kw["json"] = {}
    return await c.request(method, path, **kw)


async def test_a_rebinding_host_is_refused_on_every_endpoint() -> None:
    async with api() as (app, c):
        routes = list(endpoints(app))
        assert ("POST", "/v1/corpus/refresh") in routes
        assert ("POST", "/v1/search") in routes
        for method, path in routes:
            reply = await _call(c, method, path, headers={"Host": "attacker.example"})
            assert reply.status_code == 400, (method, path)
            assert reply.headers["content-type"] == PROBLEM
            assert "Host header" in reply.json()["detail"]
        for host in ("localhost:8080", "127.0.0.1", "[::1]:8080", "LOCALHOST"):
            assert (await c.get("/healthz", headers={"Host": host})).status_code == 200, host


async def test_allowed_hosts_add_names() -> None:
    async with api(allowed_hosts="quarry.lan, *.home.arpa") as (_, c):
        for host in ("quarry.lan", "box.home.arpa:8080", "localhost"):
            assert (await c.get("/healthz", headers={"Host": host})).status_code == 200, host
        assert (await c.get("/healthz", headers={"Host": "evil.lan"})).status_code == 400


def test_the_bind_address_is_an_allowed_host() -> None:
    assert "192.168.1.5" in allowed_hosts(Settings(host="192.168.1.5", api_tokens=BEARER))
    assert "[fd00::5]" in allowed_hosts(Settings(host="fd00::5", api_tokens=BEARER))
    assert "0.0.0.0" not in allowed_hosts(Settings(host="0.0.0.0", api_tokens=BEARER))


async def test_cors_is_closed_by_default() -> None:
    preflight = {
        "Origin": "https://attacker.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    # docs/api.md: preflights from other origins get 400 (they got 405, or 401 with tokens)
    for settings in ({}, {"api_tokens": BEARER}, {"cors_origins": "https://ui.example"}):
        async with api(**settings) as (_, c):
            for path in ("/v1/search", "/v1/sessions", "/nowhere"):
                reply = await c.options(path, headers=preflight)
                assert reply.status_code == 400, (settings, path)
                assert reply.headers["content-type"] == PROBLEM
                assert reply.json()["status"] == 400
                assert "access-control-allow-origin" not in reply.headers
    async with api(cors_origins="https://ui.example") as (_, c):
        ok = await c.options("/v1/search", headers={**preflight, "Origin": "https://ui.example"})
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == "https://ui.example"
        bad_method = {**preflight, "Origin": "https://ui.example"}
        bad_method["Access-Control-Request-Method"] = "PUT"
        refused = await c.options("/v1/search", headers=bad_method)
        assert (refused.status_code, refused.headers["content-type"]) == (400, PROBLEM)


async def test_with_tokens_every_endpoint_needs_one() -> None:
    async with api(api_tokens=f"{BEARER},another-token-of-16+") as (app, c):
        for method, path in endpoints(app):
            bare = await _call(c, method, path)
            if path in OPEN:
                assert bare.status_code == 200, path
                continue
            assert bare.status_code == 401, (method, path)
            assert bare.headers["content-type"] == PROBLEM
            assert bare.headers["www-authenticate"] == 'Bearer realm="quarry"'
            wrong = await _call(c, method, path, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
            assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
            good = await _call(c, method, path, headers={"Authorization": f"Bearer {BEARER}"})
            assert good.status_code not in (401, 403), (method, path, good.text)
        answered = await c.post(
            "/v1/search",
            json={"query": "what is quarry"},
            headers={"Accept": "application/json", "Authorization": "bearer another-token-of-16+"},
        )
        assert answered.status_code == 200
        assert answered.json()["status"] == "answered"
        cookie = await c.get("/v1/corpus", headers={"Cookie": f"quarry_token={BEARER}"})
        assert cookie.status_code != 401


def test_tokens_come_from_the_setting_and_the_file(tmp_path: Path) -> None:
    token_file = tmp_path / "tokens"
    token_file.write_text("# one token a line\n\nfile-token-0123456789\n")
    settings = Settings(api_tokens=BEARER, api_token_file=str(token_file))
    assert [c.token for c in load_tokens(settings)] == [BEARER, "file-token-0123456789"]
    with pytest.raises(ConfigError, match="cannot read"):
        load_tokens(Settings(api_token_file=str(tmp_path / "missing")))
    token_file.write_text("# nothing\n")
    with pytest.raises(ConfigError, match="is empty"):
        load_tokens(Settings(api_token_file=str(token_file)))
    with pytest.raises(ConfigError, match="at least 16"):
        load_tokens(Settings(api_tokens="short"))


def test_a_non_loopback_bind_needs_a_token() -> None:
    check_bind(Settings(host="127.0.0.1"), ())
    check_bind(Settings(host="::1"), ())
    check_bind(Settings(host="0.0.0.0"), (BEARER,))
    check_bind(Settings(host="0.0.0.0", insecure_no_auth=True), ())
    with pytest.raises(ConfigError, match=r"ORCHESTRATOR_HOST=0\.0\.0\.0 is not a loopback"):
        check_bind(Settings(host="0.0.0.0"), ())


async def _ndjson_search(c: httpx.AsyncClient, **headers: str) -> httpx.Response:
    return await c.post(
        "/v1/search",
        json={"query": "what is quarry"},
        headers={"Accept": "application/x-ndjson", **headers},
    )


async def test_over_the_limit_is_429_with_retry_after_and_near_it_warns() -> None:
    async with api(rate_questions="3/minute", rate_warn_at=0.6) as (_, c):
        first = await _ndjson_search(c)
        second = await _ndjson_search(c)
        third = await _ndjson_search(c)
        over = await _ndjson_search(c)
    assert [r.status_code for r in (first, second, third)] == [200, 200, 200]
    assert "rate_limit_near" not in first.text
    for reply in (second, third):  # 2 of 3 and 3 of 3 used: over 60 %
        lines = [httpx.Response(200, content=x).json() for x in reply.text.splitlines()]
        assert [e["type"] for e in lines[:2]] == ["run.started", "warning"]
        assert lines[1]["data"]["code"] == "rate_limit_near"
        assert [e["seq"] for e in lines] == list(range(len(lines)))
    assert over.status_code == 429
    assert over.headers["content-type"] == PROBLEM
    assert 1 <= int(over.headers["retry-after"]) <= 60
    assert over.json()["title"] == "Too many requests"


async def test_limits_count_per_token_and_per_family() -> None:
    other = "second-token-0123456789"
    async with api(api_tokens=f"{BEARER},{other}", rate_questions="1/minute") as (_, c):
        assert (await _ndjson_search(c, Authorization=f"Bearer {BEARER}")).status_code == 200
        assert (await _ndjson_search(c, Authorization=f"Bearer {BEARER}")).status_code == 429
        assert (await _ndjson_search(c, Authorization=f"Bearer {other}")).status_code == 200
        # Indexing is another family: its own limit, untouched by the questions.
        refresh = await c.post(
            "/v1/corpus/refresh", json={}, headers={"Authorization": f"Bearer {BEARER}"}
        )
        assert refresh.status_code != 429


def test_a_bad_rate_setting_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match=r"ORCHESTRATOR_RATE_QUESTIONS|rate_questions"):
        Settings(rate_questions="ten a minute")
    assert Settings(rate_questions="off").rate_questions == "off"


_RATES = ("rate_questions", "rate_research", "rate_indexing")


def _defaults() -> dict[str, Any]:
    """The rate settings as shipped (the harness raises them for the other tests)."""
    return {name: Settings.model_fields[name].default for name in _RATES}


async def test_one_person_on_loopback_asks_60_questions_in_a_minute_with_the_defaults() -> None:
    # The UI, an Open WebUI connection and a script share 127.0.0.1, so one budget.
    async with api(**_defaults()) as (_, c):
        replies = [await _ndjson_search(c) for _ in range(60)]
        chat = await c.post(
            "/v1/chat/completions",
            json={"model": "quarry-search", "messages": [{"role": "user", "content": "tides?"}]},
        )
    assert [r.status_code for r in replies] == [200] * 60
    assert chat.status_code == 200, chat.text


def test_auto_limits_are_personal_without_tokens_and_per_client_with_them() -> None:
    assert resolve(Settings(), tokens=False) == PERSONAL
    assert resolve(Settings(), tokens=True) == SHARED
    mixed = resolve(Settings(rate_questions="5/minute", rate_indexing="off"), tokens=True)
    assert mixed == {"questions": "5/minute", "research": SHARED["research"], "indexing": "off"}
    for profile in (PERSONAL, SHARED):  # every profile value is valid `limits` notation
        for value in profile.values():
            assert Settings(rate_questions=value).rate_questions == value


@pytest.mark.parametrize(
    ("family", "method", "path", "body"),
    [
        ("rate_questions", "POST", "/v1/search", {"query": "what is quarry"}),
        (
            "rate_questions",
            "POST",
            "/v1/chat/completions",
            {"model": "quarry-search", "messages": [{"role": "user", "content": "tides?"}]},
        ),
    ],
)
async def test_every_rate_limited_route_answers_429_with_retry_after(
    family: str, method: str, path: str, body: dict[str, Any]
) -> None:
    # Research and indexing: tests/integration (this app has neither research nor a corpus).
    async with api(**{family: "1/minute"}) as (_, c):
        headers = {"Accept": "application/json"}
        await c.request(method, path, json=body, headers=headers)
        over = await c.request(method, path, json=body, headers=headers)
    assert over.status_code == 429, over.text
    assert over.headers["content-type"] == PROBLEM
    assert 1 <= int(over.headers["retry-after"]) <= 60
