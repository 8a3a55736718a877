"""A deep-research run through a `make run` stack with the real embedded LLM (Gemma 3 270M) over
the fixture web: it completes, its report cites only fixture pages the reader really fetched,
every `[n]` resolves, and the stream resumes by Last-Event-ID without a gap or a duplicate.

Gemma's decisions are meaningless (its scope falls back to the query as the one dimension more
often than not); the test checks the engine's guarantees, never the prose. The run's wall time
is printed (pytest -s) for the README.
"""

from __future__ import annotations

import sys
import time

import httpx
import pytest

from tests.e2e.protocol import CITATION, CLIENT_TIMEOUT, Event, sse_frames
from tests.e2e.stack import Stack
from tests.e2e.web import PAGES, FixtureWeb

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


def _follow(client: httpx.Client, run_id: str, after: int | None = None) -> list[Event]:
    headers = {} if after is None else {"Last-Event-ID": str(after)}
    with client.stream("GET", f"/v1/research/{run_id}/events", headers=headers) as reply:
        assert reply.status_code == 200, reply.read()
        events = []
        for event in sse_frames(reply):
            events.append(event)
            sys.stderr.write(f"{event.seq} {event.type}\n")
        return events


def test_research_run_completes_with_a_report_citing_fixture_pages(
    stack: Stack, web: FixtureWeb
) -> None:
    start = time.monotonic()
    with httpx.Client(base_url=stack.api, timeout=CLIENT_TIMEOUT) as client:
        reply = client.post(
            "/v1/research", json={"query": "Who designed the Zephyrine Lighthouse?"}
        )
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["research_id"]
        # hang up after the first finding, then pick the stream up where it stopped
        head: list[Event] = []
        with client.stream("GET", f"/v1/research/{run_id}/events") as stream:
            for event in sse_frames(stream):
                head.append(event)
                sys.stderr.write(f"{time.monotonic() - start:6.1f} {event.type}\n")
                if event.type in ("research.finding", "research.completed", "error"):
                    break
        tail = _follow(client, run_id, after=head[-1].seq)
        elapsed = time.monotonic() - start
        events = head + tail
        assert [e.seq for e in events] == list(range(len(events)))
        assert events[-1].type == "research.completed", [e.type for e in events[-6:]]
        done = next(e.data for e in events if e.type == "report.completed")
        view = client.get(f"/v1/research/{run_id}").json()
        exported = client.get(f"/v1/research/{run_id}/report.md").text
    sys.stderr.write(f"\ndeep research with Gemma 3 270M: {elapsed:.1f} s, {view['counters']}\n")
    assert view["status"] == "completed"
    assert exported == done["report"] == view["report"]
    sources = done["sources"]
    searches = [(e.data["query"], e.data["count"]) for e in events if e.type == "search.completed"]
    scope = next(e.data for e in events if e.type == "scope.completed")
    assert sources, (scope, searches, view["warnings"])
    assert [s["n"] for s in sources] == list(range(1, len(sources) + 1))
    assert {s["url"] for s in sources} <= {web.url(p) for p in PAGES}
    assert view["counters"]["pages_read"] > 0
    assert all(web.fetched(s["url"]) > 0 for s in sources), web.hits
    body = done["report"].split("\n## Sources\n")[0]
    numbers = {int(n) for n in CITATION.findall(body)}
    assert numbers <= {s["n"] for s in sources}, numbers
    assert set(done["cited"]) == numbers
    assert "## Contents" in body
    assert "## Summary" in body
