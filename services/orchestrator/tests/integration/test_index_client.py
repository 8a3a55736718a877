"""The orchestrator's index client against the real index service (in memory, 127.0.0.1)."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from index.config import Settings as IndexSettings
from index.server import build_server
from orchestrator.adapters.grpc.corpus import CorpusClient, LocalDoc
from orchestrator.core.ask.domain import CorpusError


def _doc(name: str, text: str) -> LocalDoc:
    return LocalDoc(
        f"local:/notes/{name}.md", name.title(), text, "ab" * 32, len(text), 1, "markdown"
    )


async def test_search_passages_round_trip_and_failure() -> None:
    server = build_server(IndexSettings(port=0, dense=False))
    port = await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = CorpusClient(channel, limit=asyncio.Semaphore(2))
        assert await client.ping(timeout=2)
        tides = "# Tides\n\nSpring tides follow the new moon.\n\nNeap tides come at quarter moon."
        await client.index([_doc("tides", tides), _doc("bread", "Knead the dough.")], [], timeout=5)
        stats = await client.commit(timeout=10)
        found = await client.search_passages(
            ["spring tides", "new moon"], top_k=5, timeout=5, max_per_document=1
        )
        hits = await client.search("dough", top_k=3, timeout=5)
        await server.stop(0)
        with pytest.raises(CorpusError) as err:
            await client.search_passages(["tides"], top_k=5, timeout=1)
        assert not await client.ping(timeout=0.5)
    assert (stats.documents, stats.embedded) == (2, 0)
    assert found.retrieval == "bm25"  # dense off: BM25 alone, never an error
    assert [p.url for p in found.passages] == ["local:/notes/tides.md"]
    assert "Spring tides" in found.passages[0].text
    assert found.passages[0].title == "Tides"
    assert [(h.url, h.source, h.engine_rank) for h in hits] == [
        ("local:/notes/bread.md", "local", 1)
    ]
    assert err.value.code == "UNAVAILABLE"


async def test_a_bad_search_passages_request_is_invalid_argument() -> None:
    server = build_server(IndexSettings(port=0, dense=False))
    port = await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = CorpusClient(channel, limit=asyncio.Semaphore(2))
            with pytest.raises(CorpusError) as err:
                await client.search_passages(["  "], top_k=5, timeout=5)
    finally:
        await server.stop(0)
    assert err.value.code == "INVALID_ARGUMENT"
    assert "at least one non-empty query" in str(err.value)
