"""The source policy by domain on every face: HTTP quick search and deep research, the
OpenAI-compatible API and MCP (the web UI: tests/ui/test_domains.py). Over a fixture web of
several ``*.test`` domains read by the real reader: a denied domain is never fetched (the page
server counts requests per host), never cited, and listed in the `policy` event; an allow list
cites only allowed domains; a redirect to a denied domain is dropped after reading; a bad
domain is a 422 problem (an MCP tool error) before anything is searched.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import pytest_asyncio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from services.orchestrator.tests.integration.domains_support import (
    DENIED,
    DomainWeb,
    hosts_of,
    policy_drops,
    serve_domain_web,
)
from services.orchestrator.tests.integration.research_support import research_reply
from services.orchestrator.tests.integration.support import (
    Stack,
    judge,
    of,
    serve_http,
    stack,
    status,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def web() -> AsyncIterator[DomainWeb]:
    async with serve_domain_web() as running:
        yield running


@asynccontextmanager
async def domain_stack(web: DomainWeb, **settings: Any) -> AsyncIterator[Stack]:
    async with stack(web.world, **settings) as s:
        s.searx.results = web.results
        yield s


def cited_hosts(events: list[dict[str, Any]]) -> set[str]:
    return hosts_of([src["url"] for src in of(events, "sources")[0]["sources"]])


def never_fetched(web: DomainWeb, before: int, *hosts: str) -> None:
    fetched = [h for h, _ in web.hits[before:]]
    assert not set(fetched) & set(hosts), fetched
    assert fetched, "nothing was fetched at all: the test proves nothing"


async def test_http_deny_list_never_fetched_never_cited(web: DomainWeb) -> None:
    before = len(web.hits)
    async with domain_stack(web, domains_deny="ads.evil.test") as s:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        events = await s.ask(options={"domains": {"deny": ["Evil.test"]}})
    assert status(events) == "answered"
    never_fetched(web, before, *DENIED)
    assert cited_hosts(events) == {"docs.good.test", "other.test"}
    drops = policy_drops(events)
    assert {(d["host"], d["stage"], d["rule"]) for d in drops} == {
        ("evil.test", "result", "deny evil.test (request)"),
        # the server's rule is named, though the request's covers it too: the server's wins
        ("ads.evil.test", "result", "deny ads.evil.test (server)"),
    }
    search = next(e for e in of(events, "policy") if e["stage"] == "search")
    assert search["operators"] == "-site:ads.evil.test -site:evil.test"
    assert all(q.endswith("-site:ads.evil.test -site:evil.test") for q in s.searx.queries)


async def test_http_allow_list_and_site_operators_cite_only_allowed(web: DomainWeb) -> None:
    before = len(web.hits)
    async with domain_stack(web) as s:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        events = await s.ask(
            "what causes tides site:good.test -site:blog.good.test",
            session_id="allowlist",
        )
        stored = (await s.client.get("/v1/sessions/allowlist")).json()
    assert status(events) == "answered"
    never_fetched(web, before, *DENIED, "other.test")
    assert cited_hosts(events) == {"docs.good.test"}
    assert {d["host"] for d in policy_drops(events)} == {"evil.test", "ads.evil.test", "other.test"}
    assert {d["rule"] for d in policy_drops(events)} == {"not on the request's allow list"}
    # the operators were taken out of what is searched and given to the engine as operators
    assert s.searx.queries
    assert all(q.endswith(" site:good.test -site:blog.good.test") for q in s.searx.queries)
    assert stored["turns"][0]["question"] == "what causes tides site:good.test -site:blog.good.test"
    kept = stored["turns"][0]["policy"]  # the stored turn records what was dropped
    assert {d["host"] for d in kept["dropped"]} == {"evil.test", "ads.evil.test", "other.test"}
    assert kept["rules"]["allow"] == [{"domain": "good.test", "scope": "query"}]


async def test_http_redirect_to_a_denied_domain_is_dropped(web: DomainWeb) -> None:
    async with domain_stack(web) as s:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        events = await s.ask("tides moved", options={"domains": {"deny": ["evil.test"]}})
    assert status(events) == "answered"
    redirects = [d for d in policy_drops(events) if d["stage"] == "redirect"]
    assert [(d["url"], d["host"]) for d in redirects] == [
        (web.url("good.test", "moved"), "evil.test")
    ]
    assert redirects[0]["final_url"] == web.url("evil.test", "tides")
    assert "good.test" not in cited_hosts(events)
    assert not cited_hosts(events) & set(DENIED)


@pytest.mark.parametrize(
    ("body", "code", "says"),
    [
        ({"options": {"domains": {"deny": ["https://evil.test/"]}}}, "invalid_domain", "is a URL"),
        ({"query": "tides site:evil.test:8080"}, "invalid_domain", "carries a port"),
        ({"query": "site:good.test"}, "empty_query", "only site: operators"),
        ({"options": {"domains": {"allow": ["other.test"]}}}, "domain_not_allowed", "narrow"),
        ({"query": "tides site:other.test"}, "domain_not_allowed", "outside"),
    ],
)
async def test_http_bad_domains_are_refused_before_anything_runs(
    web: DomainWeb, body: dict[str, Any], code: str, says: str
) -> None:
    before = len(web.hits)
    async with domain_stack(web, domains_allow="good.test") as s:
        reply = await s.client.post("/v1/search", json={"query": "what causes tides", **body})
        research = await s.client.post("/v1/research", json={"query": "tides", **body})
    for refused in (reply, research):
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert refused.json()["code"] == code
        assert says in refused.json()["detail"]
    assert s.searx.queries == []
    assert web.hits[before:] == []


async def test_http_research_applies_the_policy_to_every_dimension(web: DomainWeb) -> None:
    before = len(web.hits)
    async with domain_stack(web, domains_deny="evil.test") as s, serve_http(s.app) as base:
        s.llm.script = research_reply
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            reply = await client.post(
                "/v1/research", json={"query": "how do tides work -site:other.test"}
            )
            assert reply.status_code == 202, reply.text
            run_id = reply.json()["research_id"]
            async with client.stream("GET", f"/v1/research/{run_id}/events") as stream:
                text = "".join([chunk async for chunk in stream.aiter_text()])
            shown = (await client.get(f"/v1/research/{run_id}")).json()
    assert shown["status"] == "completed", shown
    assert "event: policy" in text
    never_fetched(web, before, *DENIED, "other.test")
    assert hosts_of([src["url"] for src in shown["sources"]]) == {"docs.good.test"}
    dropped = shown["policy"]["dropped"]
    assert {d["host"] for d in dropped} == {*DENIED, "other.test"}
    assert {d["dimension"] for d in dropped} == {d["id"] for d in shown["dimensions"]}
    assert shown["policy"]["rules"]["site_deny"] == ["other.test"]
    assert shown["query"] == "how do tides work"  # the operator is a rule, not search text
    assert all(q.endswith("-site:evil.test -site:other.test") for q in s.searx.queries)


async def test_openai_extra_body_domains(web: DomainWeb) -> None:
    before = len(web.hits)
    async with domain_stack(web) as s, serve_http(s.app) as base:
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            messages = [{"role": "user", "content": "what causes tides"}]
            reply = await client.post(
                "/v1/chat/completions",
                json={
                    "model": "quarry-search",
                    "messages": messages,
                    "domains": {"deny": ["evil.test"], "allow": ["good.test", "evil.test"]},
                },
            )
            bad = await client.post(
                "/v1/chat/completions",
                json={
                    "model": "quarry-research",
                    "messages": [{"role": "user", "content": "tides -site:evil.test:80"}],
                },
            )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    never_fetched(web, before, *DENIED, "other.test")
    assert hosts_of([src["url"] for src in body["sources"]]) == {"docs.good.test"}
    dropped = body["quarry"]["policy"]["dropped"]
    assert {(d["host"], d["rule"]) for d in dropped} >= {("evil.test", "deny evil.test (request)")}
    assert bad.status_code == 422, bad.text
    assert bad.json()["error"]["code"] == "invalid_domain"


@asynccontextmanager
async def mcp_session(base: str) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(f"{base}/mcp") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _text(result: object) -> str:
    content = getattr(result, "content", [])
    return "\n".join(c.text for c in content if isinstance(c, TextContent))


async def test_mcp_tool_arguments(web: DomainWeb) -> None:
    before = len(web.hits)
    lines: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")

    async with (
        domain_stack(web) as s,
        serve_http(s.app) as base,
        mcp_session(base) as session,
    ):
        s.llm.queue("judge", judge("insufficient"), judge("sufficient"))
        denied = await session.call_tool(
            "search",
            {"query": "what causes tides", "deny_domains": ["evil.test"]},
            progress_callback=on_progress,
        )
        allowed = await session.call_tool(
            "search", {"query": "what causes tides", "allow_domains": ["*.good.test"]}
        )
        bad = await session.call_tool(
            "search", {"query": "what causes tides", "deny_domains": ["evil test"]}
        )
        bad_research = await session.call_tool(
            "research", {"query": "tides", "allow_domains": ["127.0.0.1"]}
        )
        await asyncio.sleep(0)
    assert not denied.isError, _text(denied)
    never_fetched(web, before, *DENIED)
    sources = _text(denied).split("Sources:")[1]
    assert "docs.good.test" in sources
    assert not any(f"{h}:" in sources for h in DENIED)
    assert "Dropped by the source policy: ads.evil.test, evil.test" in _text(denied)
    assert any("Source policy dropped 2 result(s)" in line for line in lines)
    cited = _text(allowed).split("Sources:")[1].split("\n\n")[0]
    assert "docs.good.test" in cited
    assert "other.test" not in cited
    assert bad.isError
    assert "'evil test' is not a valid domain name" in _text(bad)
    assert bad_research.isError
    assert "IP address" in _text(bad_research)
