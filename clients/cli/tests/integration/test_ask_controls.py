"""The CLI's conversation and search flags (issue 27 item 1) against the real orchestrator over
HTTP: edit a turn, regenerate one, and the per-question options (mode, length, sources,
engines, page) reaching the SearXNG stand-in."""

from __future__ import annotations

import asyncio
import io

import pytest
from quarry_cli import main as cli

from services.orchestrator.tests.integration.support import (
    World,
    judge,
    serve_http,
    stack,
    world,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here


async def quarry(base: str, *args: str) -> tuple[int, str]:
    """``quarry --url base …`` (in a thread: the server answers on this loop)."""
    out = io.StringIO()
    code = await asyncio.to_thread(cli.main, ["--url", base, "ask", "-q", *args], out)
    return code, out.getvalue()


async def test_edit_and_regenerate_a_turn(world: World) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        for question in ("what causes tides", "and neap tides"):
            s.llm.queue("judge", judge("sufficient"))
            assert (await quarry(base, question, "--session", "cli-1"))[0] == cli.EXIT_OK
        s.llm.queue("judge", judge("sufficient"))
        code, _ = await quarry(
            base, "what causes spring tides", "--session", "cli-1", "--edit-turn", "1"
        )
        assert code == cli.EXIT_OK
        edited = (await s.client.get("/v1/sessions/cli-1")).json()["turns"]
        asked = len(s.llm.calls)
        s.llm.queue("judge", judge("sufficient"))
        code, out = await quarry(base, "--session", "cli-1", "--regenerate", "1")
        regenerated = (await s.client.get("/v1/sessions/cli-1")).json()["turns"]
    assert code == cli.EXIT_OK
    assert "Sources:" in out
    assert [t["question"] for t in edited] == ["what causes spring tides"]
    assert [t["question"] for t in regenerated] == ["what causes spring tides"]
    assert regenerated[0]["at"] > edited[0]["at"]  # a new answer, not the stored one
    assert len(s.llm.calls) > asked  # answered afresh (the search itself may be cached)


async def test_options_reach_the_search(world: World) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        s.llm.queue("judge", judge("sufficient"))
        args = ["--mode", "balanced", "--detail", "brief", "--sources", "web"]
        args += ["--engines", "wikipedia, arxiv", "--page", "2"]
        code, _ = await quarry(base, "what causes tides", *args)
    assert code == cli.EXIT_OK
    first = s.searx.searches[0].query
    assert (first["engines"], first["pageno"]) == ("wikipedia,arxiv", "2")


async def test_bad_edits_are_usage_errors(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    async with stack(world) as s, serve_http(s.app) as base:
        s.llm.queue("judge", judge("sufficient"))
        await quarry(base, "what causes tides", "--session", "cli-2")
        searched = len(s.searx.searches)
        no_session = await quarry(base, "--regenerate", "1")
        too_far = await quarry(base, "--session", "cli-2", "--regenerate", "3")
        edit_too_far = await quarry(base, "x", "--session", "cli-2", "--edit-turn", "3")
        bad_page = await quarry(base, "tides", "--page", "11")
    assert [r[0] for r in (no_session, too_far, edit_too_far, bad_page)] == [cli.EXIT_USAGE] * 4
    err = capsys.readouterr().err
    assert "need --session" in err
    assert "has 1 turn(s); --regenerate must be 1 to 1" in err
    assert len(s.searx.searches) == searched  # nothing refused was searched
