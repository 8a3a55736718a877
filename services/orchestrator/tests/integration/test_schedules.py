"""Scheduled research through the real HTTP API (uvicorn), real reader and ranker servers, SQLite,
the scripted SearXNG and LLM, and a real webhook receiver on 127.0.0.1 — on a TEST CLOCK: the
scheduler's ``tick`` is called with the clock moved forward, nothing waits on real time.

A schedule fires when due (not before), its run is stored like any research run, the receiver
gets one signed delivery per run, and the second run's report says what changed between two
fixture webs (a source added). A server that was off for days fires a missed schedule once. A
principal never sees another's schedules. Bad input is a problem+json 4xx, never a 500.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from orchestrator.app import create_app
from orchestrator.config import Settings
from orchestrator.core.schedules.runner import Scheduler
from orchestrator.core.schedules.signing import HEADER, verify
from quarry_cli.main import main

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_searxng import searx_result
from services.orchestrator.tests.integration.research_support import Api, Fakes, fakes, serve
from services.orchestrator.tests.integration.support import TOPICS, World, world

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]

SECRET = "a-receiver-shared-secret"  # noqa: S105 - a test key
START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)  # a Monday, noon UTC


class ManualClock:
    """The scheduler's clock: moves only when the test moves it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Receiver:
    """A webhook receiver: a real HTTP server on 127.0.0.1 that records every delivery."""

    def __init__(self) -> None:
        self.deliveries: list[Request] = []
        self.server = TinyHTTPServer(self._handle)

    async def _handle(self, request: Request) -> Response:
        self.deliveries.append(request)
        return Response(204, b"", "text/plain")

    @property
    def url(self) -> str:
        return f"{self.server.url}/hooks/quarry"


def web(world: World, topics: list[str]) -> Callable[[str], list[dict[str, Any]]]:
    """A fixture web: SearXNG finds these pages for any query."""

    def results(query: str) -> list[dict[str, Any]]:
        return [
            searx_result(f"{world.pages_url}/{t}", f"All about {t}", TOPICS[t][:80]) for t in topics
        ]

    return results


@asynccontextmanager
async def scheduled(
    world: World, data_dir: Path, clock: ManualClock, **settings: Any
) -> AsyncIterator[tuple[Api, Fakes, Scheduler]]:
    """The app with its scheduler on ``clock`` (the background loop ticks rarely: the test
    ticks), webhooks allowed to reach 127.0.0.1 and retried without waiting."""
    config = {
        "webhook_allow_private": True,
        "webhook_backoff_s": 0.0,
        "schedule_poll_s": 3600.0,
        "research_max_evaluations": 0,
        "rate_research": "off",
        "search_cache_s": 0.0,  # each run asks the (changing) fixture web again
        **settings,
    }
    async with fakes(world, data_dir, **config) as f:
        app = create_app(Settings(**f.settings), clock=clock)
        async with serve(app) as api:
            yield api, f, app.state.schedules


async def _finish(api: Api, scheduler: Scheduler, run_id: str) -> None:
    """Follow the run to its end, then tick: the scheduler finishes it."""
    await api.events(run_id)
    await scheduler.tick()


async def test_a_scheduled_run_fires_on_the_test_clock_notifies_once_and_says_what_changed(
    world: World, tmp_path: Path
) -> None:
    clock = ManualClock(START)
    receiver = Receiver()
    await receiver.server.start()
    try:
        async with scheduled(world, tmp_path, clock) as (api, f, scheduler):
            f.searx.results = web(world, ["tides", "moon"])
            body = {
                "query": "how do tides work",
                "cron": "daily",
                "timezone": "Europe/Paris",
                "webhook": {"url": receiver.url, "secret": SECRET},
            }
            reply = await api.client.post("/v1/schedules", json=body)
            assert reply.status_code == 201, reply.text
            assert SECRET not in reply.text  # write-only
            schedule = reply.json()
            assert schedule["webhook"] == {"url": receiver.url, "secret_set": True}
            # daily = 06:00 in Paris = 05:00 UTC in March (CET), the day after
            due = datetime(2026, 3, 3, 5, 0, tzinfo=UTC)
            assert schedule["next_run_at"] == due.timestamp()

            clock.now = due - timedelta(minutes=1)
            await scheduler.tick()
            runs = (await api.client.get("/v1/research")).json()
            assert runs["total"] == 0  # not due yet: nothing fired

            clock.now = due + timedelta(minutes=1)
            await scheduler.tick()
            first = (await api.client.get(f"/v1/schedules/{schedule['id']}")).json()
            first_run = first["running_id"]
            assert first_run
            await _finish(api, scheduler, first_run)
            assert len(receiver.deliveries) == 1

            # The web changes: a page about neap tides appears. The next day's run finds it.
            f.searx.results = web(world, ["tides", "moon", "neap"])
            clock.now = due + timedelta(days=1, minutes=1)
            await scheduler.tick()
            second = (await api.client.get(f"/v1/schedules/{schedule['id']}")).json()
            second_run = second["running_id"]
            assert second_run
            assert second_run != first_run
            await _finish(api, scheduler, second_run)
            await scheduler.tick()  # ticking again delivers nothing twice
            await scheduler.tick()

            assert len(receiver.deliveries) == 2
            delivery = receiver.deliveries[-1]
            stamp = int(delivery.headers[HEADER.lower()].split(",")[0].removeprefix("t="))
            assert verify(SECRET, delivery.headers[HEADER.lower()], delivery.body, now=stamp)
            assert not verify(
                "another-secret-entirely",
                delivery.headers[HEADER.lower()],
                delivery.body,
                now=stamp,
            )
            payload = json.loads(delivery.body)
            neap = f"{world.pages_url}/neap"
            assert payload["run"]["research_id"] == second_run
            assert payload["run"]["status"] == "completed"
            assert [s["url"] for s in payload["changes"]["added_sources"]] == [neap]
            assert payload["changes"]["previous_run_id"] == first_run
            assert neap in payload["what_changed"]

            # The run is stored like any other, its report carrying the section.
            report = (await api.client.get(f"/v1/research/{second_run}")).json()["report"]
            section = report.split("## What changed since the last run", 1)[1]
            assert neap in section.split("## Sources", 1)[0]
            shown = (await api.client.get(f"/v1/schedules/{schedule['id']}")).json()
            assert shown["last_run"]["research_id"] == second_run
            assert shown["last_run"]["url"] == f"/v1/research/{second_run}"
            assert shown["runs"] == 2
            assert shown["last_changes"]["added_sources"][0]["url"] == neap
            assert shown["next_run_at"] == (due + timedelta(days=2)).timestamp()
    finally:
        await receiver.server.stop()


async def test_a_missed_run_fires_once_on_start_not_once_per_missed_day(
    world: World, tmp_path: Path
) -> None:
    clock = ManualClock(START)
    async with scheduled(world, tmp_path, clock) as (api, _, scheduler):
        reply = await api.client.post(
            "/v1/schedules", json={"query": "how do tides work", "cron": "daily"}
        )
        assert reply.status_code == 201, reply.text
        schedule_id = reply.json()["id"]
        await scheduler.tick()
    # The server is off for five days; it starts again (its first tick runs at start).
    clock.now = START + timedelta(days=5)
    async with scheduled(world, tmp_path, clock) as (api, _, scheduler):
        for _ in range(3):
            await scheduler.tick()
        shown = (await api.client.get(f"/v1/schedules/{schedule_id}")).json()
        runs = (await api.client.get("/v1/research")).json()
        assert runs["total"] == 1, runs
        assert shown["running_id"] == runs["runs"][0]["research_id"]
        # the next firing is the next 06:00 after now, not one of the missed ones
        assert shown["next_run_at"] == datetime(2026, 3, 8, 6, 0, tzinfo=UTC).timestamp()
        await _finish(api, scheduler, shown["running_id"])
        assert (await api.client.get("/v1/research")).json()["total"] == 1


ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789ab"


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_principal_never_sees_anothers_schedules(world: World, tmp_path: Path) -> None:
    clock = ManualClock(START)
    tokens = {"api_tokens": f"alice:{ALICE},bob:{BOB}"}
    async with scheduled(world, tmp_path, clock, **tokens) as (api, _, _scheduler):
        made = await api.client.post(
            "/v1/schedules", json={"query": "tides", "cron": "weekly"}, headers=_as(ALICE)
        )
        assert made.status_code == 201, made.text
        sid = made.json()["id"]
        assert made.json()["owner"] == "alice"
        listed = (await api.client.get("/v1/schedules", headers=_as(BOB))).json()
        assert listed["schedules"] == []
        assert listed["total"] == 0
        for method, path, body in [
            ("GET", f"/v1/schedules/{sid}", None),
            ("PATCH", f"/v1/schedules/{sid}", {"paused": True}),
            ("POST", f"/v1/schedules/{sid}/run", {}),
            ("DELETE", f"/v1/schedules/{sid}", None),
        ]:
            reply = await api.client.request(method, path, json=body, headers=_as(BOB))
            assert reply.status_code == 404, (method, reply.text)
            assert reply.headers["content-type"] == "application/problem+json"
        mine = (await api.client.get(f"/v1/schedules/{sid}", headers=_as(ALICE))).json()
        assert mine["paused"] is False
        assert (await api.client.get("/v1/schedules", headers=_as(ALICE))).json()["total"] == 1


BAD = [
    ({"query": "q", "cron": "61 * * * *"}, "Bad cron expression"),
    ({"query": "q", "cron": "every day"}, "five fields"),
    ({"query": "q", "cron": "daily", "timezone": "Mars/Olympus"}, "Unknown time zone"),
    ({"query": "q", "cron": "* * * * *"}, "shortest interval"),
    ({"query": "q", "cron": "0 0 30 2 *"}, "Bad cron expression"),
    (
        {
            "query": "q",
            "cron": "daily",
            "webhook": {"url": "http://169.254.169.254/", "secret": SECRET},
        },
        "not allowed",
    ),
    (
        {"query": "q", "cron": "daily", "webhook": {"url": "ftp://x.example/", "secret": SECRET}},
        "not allowed",
    ),
    (
        {
            "query": "q",
            "cron": "daily",
            "webhook": {"url": "https://x.example/", "secret": "short"},
        },
        "",
    ),
    ({"query": "q", "cron": "daily", "options": {"sources": ["gopher"]}}, ""),
    ({"query": "", "cron": "daily"}, ""),
    ({"query": "q"}, ""),
    ({"query": "q", "cron": "daily", "surprise": 1}, ""),
]


async def test_bad_input_is_a_problem_not_a_500(world: World, tmp_path: Path) -> None:
    async with scheduled(world, tmp_path, ManualClock(START)) as (api, _, _scheduler):
        for body, says in BAD:
            reply = await api.client.post("/v1/schedules", json=body)
            assert reply.status_code == 422, (body, reply.text)
            assert reply.headers["content-type"] == "application/problem+json"
            assert says in reply.json()["detail"], (body, reply.text)
            assert SECRET not in reply.text
        assert (await api.client.get("/v1/schedules")).json()["total"] == 0
        for path in ("/v1/schedules/nope", "/v1/schedules/" + "0" * 32):
            assert (await api.client.get(path)).status_code in (404, 422)


async def test_edit_pause_resume_run_now_and_delete(world: World, tmp_path: Path) -> None:
    clock = ManualClock(START)
    async with scheduled(world, tmp_path, clock) as (api, _, scheduler):
        sid = (
            await api.client.post("/v1/schedules", json={"query": "tides", "cron": "daily"})
        ).json()["id"]
        bad = await api.client.patch(f"/v1/schedules/{sid}", json={"timezone": "Nowhere/Land"})
        assert bad.status_code == 422
        assert "Unknown time zone" in bad.json()["detail"]
        paused = (await api.client.patch(f"/v1/schedules/{sid}", json={"paused": True})).json()
        assert paused["paused"] is True
        assert paused["next_run_at"] is None
        clock.now = START + timedelta(days=3)
        await scheduler.tick()
        assert (await api.client.get("/v1/research")).json()["total"] == 0  # paused: no run
        resumed = (
            await api.client.patch(
                f"/v1/schedules/{sid}", json={"paused": False, "cron": "0 9 * * 1-5"}
            )
        ).json()
        # a resume never catches up: the next firing is after now (Thursday 5 March, 12:00)
        assert resumed["next_run_at"] == datetime(2026, 3, 6, 9, 0, tzinfo=UTC).timestamp()
        started = await api.client.post(f"/v1/schedules/{sid}/run", json={})
        assert started.status_code == 202, started.text
        again = await api.client.post(f"/v1/schedules/{sid}/run", json={})
        assert again.status_code == 409  # one run of a schedule at a time
        await _finish(api, scheduler, started.json()["research_id"])
        assert (await api.client.delete(f"/v1/schedules/{sid}")).status_code == 204
        assert (await api.client.get(f"/v1/schedules/{sid}")).status_code == 404
        # its run stays, like any research run
        run = await api.client.get(f"/v1/research/{started.json()['research_id']}")
        assert run.status_code == 200


async def test_quarry_schedule_cli_adds_lists_pauses_refuses_and_deletes(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with scheduled(world, tmp_path, ManualClock(START)) as (api, _, _scheduler):

        async def quarry(*argv: str) -> tuple[int, str]:
            out = io.StringIO()
            status = await asyncio.to_thread(main, ["--url", api.base, "schedule", *argv], out)
            return status, out.getvalue()

        status, text = await quarry("add", "how do tides work", "--cron", "weekly", "--json")
        assert status == 0, text
        sid = json.loads(text)["id"]
        status, text = await quarry("list")
        assert status == 0
        assert sid in text
        assert "[weekly UTC]" in text
        assert (await quarry("pause", sid))[1].count("paused") == 1
        # a webhook without its secret in the environment is a usage error, not a request
        monkeypatch.delenv("QUARRY_WEBHOOK_SECRET", raising=False)
        assert (await quarry("add", "q", "--webhook", "https://x.example/"))[0] == 2
        assert (await quarry("add", "q", "--cron", "61 * * * *"))[0] == 2  # a 422
        assert (await quarry("delete", sid)) == (0, f"deleted {sid}\n")
        assert (await quarry("show", sid))[0] == 2  # a 404
