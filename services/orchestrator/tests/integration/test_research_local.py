"""Deep research over local documents only: the same round as quick search (core/ask/round.py), so
the index's passages reach the findings — not the 320-character search snippet research used to
work from when no web page was read."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from services.orchestrator.tests.integration.corpus_support import corpus_world
from services.orchestrator.tests.integration.research_support import research_reply
from services.orchestrator.tests.integration.support import World, serve_http, stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["corpus_world"]  # the fixture, imported so pytest finds it here

VALUE = "amber-falcon-42"
# One paragraph: the words a search matches open it, the value closes it, ~600 characters in.
NOTE = (
    "The lighthouse keeper's passphrase for the tides log is set each winter by the harbour "
    "council. "
    + " ".join(
        f"Clause {i} of the council's rules concerns the tide tables and the lamp."
        for i in range(8)
    )
    + f" This winter the lighthouse keeper's passphrase is {VALUE}."
)


async def _indexed(client: httpx.AsyncClient) -> None:
    for _ in range(1200):
        if (await client.get("/v1/corpus")).json()["last_refresh"] is not None:
            return
        await asyncio.sleep(0.05)
    pytest.fail("the corpus was not indexed")


async def test_local_only_research_works_from_passages(corpus_world: World, tmp_path: Path) -> None:
    assert NOTE.index(VALUE) > 320  # beyond any search snippet
    root = tmp_path / "notes"
    root.mkdir()
    (root / "lighthouse.md").write_text(f"# Lighthouse\n\n{NOTE}\n")
    async with stack(corpus_world, corpus_dir=str(root)) as s, serve_http(s.app) as base:
        s.llm.script = research_reply
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            await _indexed(client)
            reply = await client.post(
                "/v1/research",
                json={"query": "lighthouse keeper passphrase", "options": {"sources": ["local"]}},
            )
            assert reply.status_code == 202, reply.text
            run_id = reply.json()["research_id"]
            async with client.stream("GET", f"/v1/research/{run_id}/events") as stream:
                text = "".join([chunk async for chunk in stream.aiter_text()])
    assert "event: research.completed" in text
    compress = [c for c in s.llm.calls if "key_finding" in str(c.schema)]
    assert compress
    # every finding was written from the passage that holds the value, not the snippet
    assert all(VALUE in c.prompt for c in compress)
    assert s.searx.queries == []
