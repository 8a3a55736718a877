"""A question whose answer is only in a local file, through the real `make run` stack.

The stack indexes CORPUS_DIR at start (reader extraction, the index service); the question asks
for local sources only (their passages come from the index's SearchPassages), so nothing may be
searched on the web or fetched over the network.
"""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.protocol import (
    CITATION,
    ask,
    check_citations,
    check_protocol,
    check_within_budget,
    first,
    wait_for,
)
from tests.e2e.stack import Stack
from tests.e2e.web import FixtureWeb

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def _indexed(api: str) -> bool:
    try:
        reply = httpx.get(f"{api}/v1/corpus", timeout=10)
    except httpx.TransportError:
        return False
    return reply.status_code == 200 and (reply.json().get("documents") or 0) >= 2


def test_local_only_question_is_answered_from_the_local_note(stack: Stack, web: FixtureWeb) -> None:
    assert wait_for(lambda: _indexed(stack.api), 120), httpx.get(f"{stack.api}/v1/corpus").text
    fetched_before = dict(web.hits)
    events = ask(
        stack.api,
        "Who ground the Quillon Observatory telescope mirror?",
        options={"sources": ["local"], "max_rounds": 1},
    )
    check_protocol(events)
    check_within_budget(events)
    assert events[-1].data["status"] == "answered", events[-1].data
    sources = first(events, "sources").data["sources"]
    note = [s for s in sources if s["url"].endswith("/observatory.md")]
    assert note, sources
    assert note[0]["url"].startswith("local:/")
    assert all(s["origin"] == "local" for s in sources), sources
    # The index served the note's passages (SearchPassages): nothing was read or fetched.
    assert [e.data["url"] for e in events if e.type == "read.completed"] == []
    ranked = first(events, "chunks.ranked").data
    assert ranked["local_documents"] >= 1, ranked
    assert ranked["local_retrieval"] in {"hybrid", "bm25"}, ranked
    assert any("mirror" in p.lower() for p in note[0]["passages"]), note[0]
    # Nothing went to the web: no fixture page was fetched during the run.
    assert dict(web.hits) == fetched_before
    check_citations(events)
    # Any [n] the engine kept points at a local note.
    text = first(events, "answer.completed").data["text"]
    by_n = {s["n"]: s["url"] for s in sources}
    assert all(by_n[int(n)].startswith("local:") for n in CITATION.findall(text))
