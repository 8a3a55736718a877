"""A client that goes away leaves no work running: no request open at the LLM server, no page
fetch open at the web. Counted where the work happens: the proxy in front of llama_cpp.server
and the fixture web server."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.e2e.protocol import CLIENT_TIMEOUT, Event, ndjson_lines, wait_for
from tests.e2e.proxy import CountingProxy
from tests.e2e.stack import Stack
from tests.e2e.web import PAGES, FixtureWeb

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

# Work must stop this soon after the client leaves. Nothing else would end it sooner: a slow
# page takes minutes to drip and the stack's read timeouts are 120 s.
SETTLE_S = 10.0


def leave_when(api: str, query: str, leave: Callable[[Event], bool]) -> list[Event]:
    """Stream a question and hang up (close the connection) once ``leave`` says so."""
    events: list[Event] = []
    with (
        httpx.Client(base_url=api, timeout=CLIENT_TIMEOUT) as client,
        client.stream(
            "POST",
            "/v1/search",
            json={"query": query},
            headers={"Accept": "application/x-ndjson"},
        ) as reply,
    ):
        for event in ndjson_lines(reply):
            events.append(event)
            if leave(event):
                break
    return events


def assert_not_stored(api: str, events: list[Event]) -> None:
    """A cancelled run leaves nothing in its session."""
    session = events[0].data["session_id"]
    reply = httpx.get(f"{api}/v1/sessions/{session}", timeout=10)
    assert reply.status_code == 404 or reply.json()["turns"] == [], reply.text


def test_leaving_mid_answer_closes_the_llm_stream(stack: Stack, llm: CountingProxy) -> None:
    streaming: list[int] = []

    def leave(event: Event) -> bool:
        if event.type == "answer.delta":
            streaming.append(llm.counts.open_requests())
            return True
        return False

    events = leave_when(stack.api, "How tall is the Zephyrine Lighthouse?", leave)
    assert events[-1].type == "answer.delta", [e.type for e in events]
    assert streaming == [1], "the answer's LLM stream was open when the client left"
    assert wait_for(lambda: llm.counts.open_requests() == 0, SETTLE_S), llm.counts
    assert_not_stored(stack.api, events)


def test_leaving_mid_read_cancels_the_page_fetches(
    stack: Stack, web: FixtureWeb, llm: CountingProxy
) -> None:
    web.slow.update(p.path for p in PAGES)
    try:
        fetching: list[int] = []

        def leave(event: Event) -> bool:
            if event.type != "read.started":
                return False
            assert wait_for(lambda: web.open_requests() > 0, 60), "the reader never fetched"
            fetching.append(web.open_requests())
            return True

        events = leave_when(stack.api, "Where does the Karvik saltbread dough proof?", leave)
        assert fetching
        assert fetching[0] >= 1
        assert wait_for(lambda: web.open_requests() == 0, SETTLE_S), web.open_requests()
        assert wait_for(lambda: llm.counts.open_requests() == 0, SETTLE_S), llm.counts
        assert_not_stored(stack.api, events)
    finally:
        web.slow.clear()
