"""Per-user data through every surface (issue 24 item 5): the production app on uvicorn over the
real reader and ranker, SQLite, the scripted SearXNG and LLM, with named tokens. User B cannot
see, follow, resume, cancel, export or delete user A's sessions and research runs through the
HTTP API, the OpenAI-compatible API or MCP (tools and the session resource), and learns nothing
from trying (the same 404 as for an id that never existed); an admin can; rows written before
owners existed belong to the single-user default."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from orchestrator.adapters.store.migrate import load_migrations, migrate
from orchestrator.adapters.store.sqlite import DB_FILE
from pydantic import AnyUrl

from services.orchestrator.tests.integration.research_support import Api, fakes, serve
from services.orchestrator.tests.integration.support import World, world
from services.orchestrator.tests.integration.test_mcp import _text as mcp_text

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789ab"
ROOT = "root-token-0123456789ab"
NOBODY_RUN = "0" * 32  # a run id that never existed: what B must not tell apart from A's
JSON = {"Accept": "application/json"}
# The way the docs showed tokens before names: two of them are two users.
OLD_STYLE = "first-unnamed-0123456789,second-unnamed-0123456789"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def unnamed_id(token: str) -> str:
    """An unnamed token's principal id as docs/security.md documents it."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:24]


def ids(named: bool) -> tuple[str, str]:
    """The principal ids of ALICE's and BOB's tokens: their names, or ids from the tokens."""
    return ("alice", "bob") if named else (unnamed_id(ALICE), unnamed_id(BOB))


@asynccontextmanager
async def team(
    world: World, data_dir: Path | None, *, named: bool = True, **settings: Any
) -> AsyncIterator[Api]:
    """The app with two users (named alice and bob, or two tokens given the way the docs
    showed before names) and the admin root, no rate limits in the way."""
    config: dict[str, Any] = {
        "api_tokens": f"alice:{ALICE},bob:{BOB}" if named else f"{ALICE},{BOB}",
        "admin_tokens": f"root:{ROOT}",
        "rate_questions": "off",
        "rate_research": "off",
        "research_max_evaluations": 0,
        **settings,
    }
    async with fakes(world, data_dir, **config) as f, serve(f.app()) as api:
        yield api


async def ask(api: Api, token: str, query: str, session_id: str) -> dict[str, Any]:
    body = {"query": query, "session_id": session_id, "options": {"sources": ["web"]}}
    reply = await api.client.post("/v1/search", json=body, headers={**JSON, **auth(token)})
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


async def research(api: Api, token: str) -> str:
    """A run started by ``token``'s user, followed to its end."""
    reply = await api.client.post(
        "/v1/research", json={"query": "how do tides work"}, headers=auth(token)
    )
    assert reply.status_code == 202, reply.text
    run_id = str(reply.json()["research_id"])
    events = await api.client.get(f"/v1/research/{run_id}/events", headers=auth(token))
    assert "event: research.completed" in events.text
    return run_id


def _detail(reply: httpx.Response, secret: str) -> str:
    # The same words as for an id that never existed (the id itself aside).
    return str(reply.json()["detail"]).replace(secret, "ID").replace(NOBODY_RUN, "ID")


async def _refused_like_nothing(api: Api, token: str, run_id: str) -> None:
    """Every call on ``run_id`` answers ``token`` as it answers for a run that never existed."""
    calls = [
        ("GET", ""),
        ("GET", "/events"),
        ("GET", "/report.md"),
        ("POST", "/resume"),
        ("POST", "/continue"),
        ("DELETE", ""),
    ]
    for method, tail in calls:
        kw: dict[str, Any] = {"json": {}} if method == "POST" else {}
        theirs = await api.client.request(
            method, f"/v1/research/{run_id}{tail}", headers=auth(token), **kw
        )
        nothing = await api.client.request(
            method, f"/v1/research/{NOBODY_RUN}{tail}", headers=auth(token), **kw
        )
        assert theirs.status_code == nothing.status_code == 404, (method, tail, theirs.text)
        assert _detail(theirs, run_id) == _detail(nothing, run_id), (method, tail)


@pytest.mark.parametrize(
    ("persist", "named"),
    [(True, False), (False, True)],
    ids=["sqlite-unnamed-tokens", "memory-named-tokens"],
)
async def test_user_b_cannot_see_or_touch_user_a_sessions_and_runs_over_http(
    world: World, tmp_path: Path, persist: bool, named: bool
) -> None:
    alice, bob = ids(named)
    async with team(world, tmp_path if persist else None, named=named) as api:
        await ask(api, ALICE, "what causes tides", "work")
        run_id = await research(api, ALICE)

        # B's lists are empty; A's session and run are "not found" for B, like nothing at all.
        mine = await api.client.get("/v1/sessions", headers=auth(BOB))
        assert mine.json()["total"] == 0, mine.json()
        runs = await api.client.get("/v1/research", headers=auth(BOB))
        assert runs.json()["total"] == 0, runs.json()
        for method in ("GET", "DELETE"):
            reply = await api.client.request(method, "/v1/sessions/work", headers=auth(BOB))
            assert reply.status_code == 404, (method, reply.text)
        renamed = await api.client.patch(
            "/v1/sessions/work", json={"title": "mine now"}, headers=auth(BOB)
        )
        assert renamed.status_code == 404
        await _refused_like_nothing(api, BOB, run_id)
        # ... and naming A as the owner is refused too (only admins may).
        for path in (f"/v1/sessions?owner={alice}", f"/v1/sessions/work?owner={alice}"):
            assert (await api.client.get(path, headers=auth(BOB))).status_code == 404, path
        assert (await api.client.get("/v1/research?owner=*", headers=auth(BOB))).status_code == 404

        # B's own "work" is another conversation: it neither joins nor reads A's.
        await ask(api, BOB, "what are spring tides", "work")
        a_work = (await api.client.get("/v1/sessions/work", headers=auth(ALICE))).json()
        b_work = (await api.client.get("/v1/sessions/work", headers=auth(BOB))).json()
        assert [t["question"] for t in a_work["turns"]] == ["what causes tides"]
        assert [t["question"] for t in b_work["turns"]] == ["what are spring tides"]
        assert (a_work["owner"], b_work["owner"]) == (alice, bob)

        # A still has everything; the run answers A (a completed run is not resumable: 409).
        assert (await api.client.get(f"/v1/research/{run_id}", headers=auth(ALICE))).is_success
        resumed = await api.client.post(
            f"/v1/research/{run_id}/resume", json={}, headers=auth(ALICE)
        )
        assert resumed.status_code == 409

        # The admin sees and acts on everyone's, naming the owner of a session.
        every = (await api.client.get("/v1/sessions?owner=*", headers=auth(ROOT))).json()
        assert sorted((s["owner"], s["session_id"]) for s in every["sessions"]) == sorted(
            [(alice, "work"), (bob, "work")]
        )
        assert (await api.client.get("/v1/sessions", headers=auth(ROOT))).json()["total"] == 0
        shown = await api.client.get(f"/v1/sessions/work?owner={alice}", headers=auth(ROOT))
        assert shown.json()["turns"][0]["question"] == "what causes tides"
        report = await api.client.get(f"/v1/research/{run_id}/report.md", headers=auth(ROOT))
        assert report.status_code == 200
        assert report.text.startswith("# how do tides work")
        listed = (await api.client.get(f"/v1/research?owner={alice}", headers=auth(ROOT))).json()
        assert [(r["research_id"], r["owner"]) for r in listed["runs"]] == [(run_id, alice)]
        gone = await api.client.delete(f"/v1/sessions/work?owner={alice}", headers=auth(ROOT))
        assert gone.status_code == 204
        assert (await api.client.get("/v1/sessions/work", headers=auth(ALICE))).status_code == 404
        assert (await api.client.get("/v1/sessions/work", headers=auth(BOB))).status_code == 200


async def test_two_unnamed_tokens_are_two_users(world: World, tmp_path: Path) -> None:
    first, second = OLD_STYLE.split(",")
    async with (
        fakes(world, tmp_path, api_tokens=OLD_STYLE, rate_questions="off") as f,
        serve(f.app()) as api,
    ):
        await ask(api, first, "what causes tides", "s1")
        theirs = (await api.client.get("/v1/sessions", headers=auth(first))).json()
        others = (await api.client.get("/v1/sessions", headers=auth(second))).json()
        refused = await api.client.get("/v1/sessions/s1", headers=auth(second))
    assert others["total"] == 0, others
    assert refused.status_code == 404
    assert [s["session_id"] for s in theirs["sessions"]] == ["s1"]
    # A stable id that is not the token: "token:" and the start of its SHA-256.
    assert re.fullmatch(r"token:[0-9a-f]{24}", theirs["sessions"][0]["owner"])
    assert first not in str(theirs)


@asynccontextmanager
async def mcp_as(base: str, token: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx.AsyncClient(headers=auth(token), timeout=120) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_openai_and_mcp_keep_each_users_data_their_own(world: World, tmp_path: Path) -> None:
    _, bob = ids(named=False)
    async with team(world, tmp_path, named=False) as api:
        # MCP: a search tool call leaves no conversation behind; A's conversation (from the
        # HTTP API) is a resource only A's reads show.
        asked_a = await api.client.post(
            "/v1/search",
            json={"query": "what causes tides", "session_id": "a-chat"},
            headers={**auth(ALICE), "Accept": "application/json"},
        )
        assert asked_a.status_code == 200, asked_a.text
        uri = "quarry://sessions/a-chat"
        async with mcp_as(api.base, ALICE) as session:
            answer = mcp_text(await session.call_tool("search", {"query": "what causes tides"}))
            assert "quarry://sessions/" not in answer
            own = await session.read_resource(AnyUrl(uri))
        assert "## what causes tides" in getattr(own.contents[0], "text", "")
        async with mcp_as(api.base, BOB) as session:
            with pytest.raises(McpError, match="No session"):
                await session.read_resource(AnyUrl(uri))
            # B's research tool: a run of B's.
            result = await session.call_tool("research", {"query": "how do tides work"})
            assert not result.isError, mcp_text(result)

        # OpenAI: B's quarry-research completion is B's run too; quick search keeps no session.
        question = {"role": "user", "content": "how do tides work"}
        body = {"model": "quarry-research", "messages": [question]}
        done = await api.client.post("/v1/chat/completions", json=body, headers=auth(BOB))
        assert done.status_code == 200, done.text
        openai_run = done.json()["quarry"]["research_id"]
        quick = {"model": "quarry-search", "messages": [question]}
        asked = await api.client.post("/v1/chat/completions", json=quick, headers=auth(ALICE))
        assert asked.status_code == 200, asked.text

        a_runs = (await api.client.get("/v1/research", headers=auth(ALICE))).json()
        b_runs = (await api.client.get("/v1/research", headers=auth(BOB))).json()
        a_sessions = (await api.client.get("/v1/sessions", headers=auth(ALICE))).json()
        all_runs = (await api.client.get("/v1/research?owner=*", headers=auth(ROOT))).json()
        await _refused_like_nothing(api, ALICE, openai_run)
    assert a_runs["total"] == 0
    assert b_runs["total"] == 2
    assert {r["owner"] for r in b_runs["runs"]} == {bob}
    assert openai_run in {r["research_id"] for r in b_runs["runs"]}
    assert [s["session_id"] for s in a_sessions["sessions"]] == ["a-chat"]
    assert all_runs["total"] == 2


def _old_database(data_dir: Path) -> None:
    """A database as the build before owners left it: one conversation and one research run."""
    data_dir.mkdir()
    conn = sqlite3.connect(data_dir / DB_FILE, isolation_level=None)
    try:
        assert migrate(conn, load_migrations()[:2]) == [1, 2]
        conn.execute("INSERT INTO sessions VALUES ('old', '', 'chat', 1.0, 2.0)")
        conn.execute(
            "INSERT INTO session_turns VALUES ('old', 0, 'an old question', 'an old answer', "
            "'[]', 'answered', 2.0)"
        )
        conn.execute(
            "INSERT INTO research_runs (id, query, mode, status, phase, session_id, state, "
            "last_seq, created_at, updated_at, finished_at) VALUES "
            "(?, 'old research', 'deep-research', 'completed', NULL, NULL, '{}', "
            "-1, 1.0, 2.0, 2.0)",
            ("a" * 32,),
        )
    finally:
        conn.close()


async def test_rows_from_before_owners_belong_to_the_single_user_default(
    world: World, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    _old_database(data_dir)
    # No tokens (one person, loopback): everything is still there, with no setup.
    async with fakes(world, data_dir) as f, serve(f.app()) as api:
        sessions = (await api.client.get("/v1/sessions")).json()
        runs = (await api.client.get("/v1/research")).json()
    assert [(s["session_id"], s["owner"]) for s in sessions["sessions"]] == [("old", "local")]
    assert [(r["research_id"], r["owner"]) for r in runs["runs"]] == [("a" * 32, "local")]
    # Tokens added later: a user sees none of it, a token named "local" inherits it, and an
    # admin reaches it by naming the owner.
    async with team(world, data_dir, api_tokens=f"alice:{ALICE},local:{BOB}") as api:
        alice = (await api.client.get("/v1/sessions", headers=auth(ALICE))).json()
        refused = await api.client.get(f"/v1/research/{'a' * 32}", headers=auth(ALICE))
        heir = (await api.client.get("/v1/sessions/old", headers=auth(BOB))).json()
        admin = await api.client.get("/v1/sessions/old?owner=local", headers=auth(ROOT))
    assert alice["total"] == 0
    assert refused.status_code == 404
    assert heir["turns"][0]["question"] == "an old question"
    assert admin.status_code == 200
