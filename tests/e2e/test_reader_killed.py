"""The reader dies mid-run: the run still completes, from search snippets, with a warning.

This needs a reader the test may kill, so the reader and orchestrator run as separate
processes here (the supervisor would stop the whole stack when one service exits). The
searx, LLM, ranker and index of the session's stack are shared.

The reader is killed while the speculative reads are in flight, that is while the snippet
judge runs; whatever the judge decides, the answer comes from snippets with the warning.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.protocol import (
    CLIENT_TIMEOUT,
    Event,
    check_protocol,
    check_within_budget,
    first,
    index,
    ndjson_lines,
    read_ok,
    wait_for,
)
from tests.e2e.proxy import CountingProxy
from tests.e2e.stack import Services, Stack, llm_env, run_services, stack_env
from tests.e2e.web import PAGES, FixtureWeb

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def lean(
    searx: str, llm: CountingProxy, stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Services]:
    """A reader and an orchestrator of their own."""
    workdir: Path = tmp_path_factory.mktemp("lean")
    env, _ = stack_env(workdir, searx, **llm_env(llm.url))
    env.update(
        RANKER_ADDR=f"127.0.0.1:{stack.ranker_port}",
        INDEX_ADDR=f"127.0.0.1:{stack.index_port}",
        ORCHESTRATOR_READ_RETRY_DELAY_S="0.2",
    )
    with run_services(workdir, env, ("reader", "orchestrator")) as services:
        yield services


def warnings(events: list[Event]) -> set[str]:
    """The warning codes of a run."""
    return {e.data["code"] for e in events if e.type == "warning"}


def test_killing_the_reader_mid_read_degrades_to_snippets(lean: Services, web: FixtureWeb) -> None:
    reader = lean.procs["reader"]
    web.slow.update(p.path for p in PAGES)
    events: list[Event] = []
    try:
        with (
            httpx.Client(base_url=lean.api, timeout=CLIENT_TIMEOUT) as client,
            client.stream(
                "POST",
                "/v1/search",
                json={"query": "How long does the Karvik-Holm ferry crossing take?"},
                headers={"Accept": "application/x-ndjson"},
            ) as reply,
        ):
            for event in ndjson_lines(reply):
                events.append(event)
                if event.type == "read.started" and reader.poll() is None:
                    assert wait_for(lambda: web.open_requests() > 0, 60), "no fetch started"
                    reader.send_signal(signal.SIGKILL)
        assert wait_for(lambda: web.open_requests() == 0, 10), web.open_requests()
    finally:
        web.slow.clear()
    check_protocol(events)
    check_within_budget(events)
    assert events[-1].data["status"] == "answered", events[-1].data
    # The premise: the reads failed while the snippet judge was still deciding.
    assert 0 <= index(events, "read.completed") < index(events, "judge"), [e.type for e in events]
    assert "reader_unavailable" in warnings(events)
    statuses = {e.data["status"] for e in events if e.type == "read.completed"}
    assert statuses
    assert statuses <= {"UNAVAILABLE", "RPC_ERROR"}, statuses
    assert read_ok(events) == set()
    sources = first(events, "sources").data["sources"]
    assert sources
    found = {u for e in events if e.type == "rank.completed" for u in e.data["urls"]}
    assert {s["url"] for s in sources} <= found
    assert first(events, "answer.completed").data["text"].strip()
