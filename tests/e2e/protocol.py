"""Read runs from the real API and check what a user (or client author) relies on.

Only behaviour and protocol are checked, never the small model's prose or judgement.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from tests.e2e.web import PAGES, FixtureWeb

# Generous: a 270M model on 2 shared cores, several LLM calls per question.
CLIENT_TIMEOUT = httpx.Timeout(400.0, connect=5.0)
CITATION = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class Event:
    """One event of a run, whichever representation it came in."""

    seq: int
    type: str
    data: dict[str, Any]


def ndjson_lines(reply: httpx.Response) -> Iterator[Event]:
    """Events from an NDJSON stream, as they arrive."""
    for line in reply.iter_lines():
        if line.strip():
            obj = json.loads(line)
            yield Event(int(obj["seq"]), str(obj["type"]), obj["data"])


def sse_frames(reply: httpx.Response) -> Iterator[Event]:
    """Events from an SSE stream (``id``, ``event``, ``data`` per frame), as they arrive."""
    fields: dict[str, str] = {}
    for line in reply.iter_lines():
        if line.startswith(":"):
            continue  # comment / keep-alive
        if line == "":
            if fields:
                yield Event(int(fields["id"]), fields["event"], json.loads(fields["data"]))
            fields = {}
            continue
        key, _, value = line.partition(":")
        fields[key] = value.removeprefix(" ")


def ask(api: str, query: str, accept: str = "application/x-ndjson", **body: Any) -> list[Event]:
    """POST a question and read the whole stream."""
    parse = sse_frames if accept == "text/event-stream" else ndjson_lines
    with (
        httpx.Client(base_url=api, timeout=CLIENT_TIMEOUT) as client,
        client.stream(
            "POST", "/v1/search", json={"query": query, **body}, headers={"Accept": accept}
        ) as reply,
    ):
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith(accept)
        return list(parse(reply))


def first(events: list[Event], kind: str) -> Event:
    """The first event of ``kind`` (the test fails if there is none)."""
    found = [e for e in events if e.type == kind]
    assert found, f"no {kind} event in {[e.type for e in events]}"
    return found[0]


def index(events: list[Event], kind: str) -> int:
    """Position of the first event of ``kind``, or -1."""
    return next((i for i, e in enumerate(events) if e.type == kind), -1)


def check_protocol(events: list[Event]) -> None:
    """docs/api.md's guarantees: order, numbering, one start, one end."""
    kinds = [e.type for e in events]
    assert kinds[0] == "run.started", kinds
    assert kinds[-1] == "run.completed", kinds
    assert kinds.count("run.started") == 1
    assert kinds.count("run.completed") == 1
    assert [e.seq for e in events] == list(range(len(events))), "seq must count from 0, no gaps"
    assert events[0].data["api_version"] == "1"
    if "answer.delta" in kinds:
        assert 0 <= index(events, "sources") < index(events, "answer.delta"), kinds
        last_delta = len(kinds) - 1 - kinds[::-1].index("answer.delta")
        assert last_delta < index(events, "answer.completed"), kinds
    warnings = [e.data["code"] for e in events if e.type == "warning"]
    assert len(warnings) == len(set(warnings)), f"a warning code repeated: {warnings}"


def check_within_budget(events: list[Event]) -> None:
    """The run ended inside the budget it announced (the budget is the product's promise)."""
    budget_ms = float(events[0].data["budget_s"]) * 1000
    assert float(events[-1].data["duration_ms"]) <= budget_ms, events[-1].data


def reads(events: list[Event]) -> tuple[set[str], dict[str, str]]:
    """URLs the run started reading, and the status of each read that completed."""
    started = {u for e in events if e.type == "read.started" for u in e.data["urls"]}
    done = {e.data["url"]: e.data["status"] for e in events if e.type == "read.completed"}
    return started, done


def read_ok(events: list[Event]) -> set[str]:
    """URLs the reader read successfully during the run."""
    return {url for url, status in reads(events)[1].items() if status == "OK"}


def check_sources(events: list[Event], web: FixtureWeb) -> list[dict[str, Any]]:
    """Sources are fixture pages, numbered 1..N, distinct, found by the search, and read.

    Every page the reader says it read, the fixture server saw fetched. An answer from page
    passages uses only pages read successfully; an answer from snippets (the snippet judge
    said enough, cancelling the speculative reads) uses search results, which were read too
    whenever the speculative batch had finished first.
    """
    sources = first(events, "sources").data["sources"]
    assert [s["n"] for s in sources] == list(range(1, len(sources) + 1))
    urls = [s["url"] for s in sources]
    assert len(urls) == len(set(urls)), urls
    assert set(urls) <= {web.url(p) for p in PAGES}, urls
    found = {u for e in events if e.type == "rank.completed" for u in e.data["urls"]}
    assert set(urls) <= found, (urls, found)
    ok = read_ok(events)
    assert all(web.fetched(u) > 0 for u in ok), (ok, web.hits)
    started, done = reads(events)
    if answered_from_pages(events) or (started and started <= done.keys()):
        assert set(urls) <= ok, (urls, done)
    return list(sources)


def answered_from_pages(events: list[Event]) -> bool:
    """Whether the answer's evidence was page passages (not search snippets)."""
    judges = [e for e in events if e.type == "judge"]
    return bool(judges) and judges[-1].data["stage"] == "chunks"


def check_citations(events: list[Event]) -> None:
    """Every [n] left in the checked answer names a listed source, and `cited` says which."""
    n_sources = len(first(events, "sources").data["sources"])
    done = first(events, "answer.completed").data
    numbers = {int(n) for n in CITATION.findall(done["text"])}
    assert numbers <= set(range(1, n_sources + 1)), (numbers, n_sources)
    assert set(done["cited"]) == numbers, done


def wait_for(condition: Callable[[], bool], deadline_s: float) -> bool:
    """Poll ``condition`` until it holds or ``deadline_s`` passes."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
