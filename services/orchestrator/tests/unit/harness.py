"""Wires the agent loop to the doubles: real gRPC clients against fake servicers on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from orchestrator.agent.loop import RunOutcome, run_question
from orchestrator.agent.state import Deps, RunOptions
from orchestrator.clients.corpus import CorpusClient
from orchestrator.clients.ranker import RankerClient
from orchestrator.clients.reader import ReaderClient
from orchestrator.config import Settings
from orchestrator.events import Event, EventSink
from orchestrator.sessions import Turn

from services.orchestrator.tests.unit.corpus_doubles import FakeCorpusRanker
from services.orchestrator.tests.unit.doubles import (
    FakeReader,
    ScriptedBrain,
    ScriptedSearcher,
    grpc_server,
)
from tests.conftest import free_port

FAST: dict[str, Any] = {
    "read_retry_delay_s": 0.01,
    "synthesis_reserve_s": 0.5,
    "question_budget_s": 20.0,
    # Tests ask faster than a person; the rate-limit tests set their own limits.
    "rate_questions": "600/minute",
    "rate_indexing": "600/minute",
}


@dataclass
class Harness:
    """The loop's collaborators, all inspectable."""

    settings: Settings
    deps: Deps
    reader: FakeReader
    ranker: FakeCorpusRanker
    brain: ScriptedBrain
    searcher: ScriptedSearcher
    outcome: RunOutcome = field(default_factory=RunOutcome)

    async def run(
        self, question: str = "what is quarry", history: Sequence[Turn] = (), **options: Any
    ) -> list[Event]:
        """Run one question to its end and return its events."""
        sink = EventSink()
        self.outcome = await run_question(
            self.deps,
            sink,
            question=question,
            history=list(history),
            options=RunOptions(**options),
            run_id="r1",
            session_id="s1",
        )
        sink.close()
        return [e async for e in sink]


@asynccontextmanager
async def harness(
    *,
    pages: dict[str, tuple[str, str]] | None = None,
    reader_delay: float = 0.0,
    reader_up: bool = True,
    ranker_up: bool = True,
    brain: ScriptedBrain | None = None,
    searcher: ScriptedSearcher | None = None,
    **settings: Any,
) -> AsyncIterator[Harness]:
    """Start fake reader/ranker servers (or point at a closed port) and build the Deps."""
    reader, ranker = FakeReader(pages or {}, delay=reader_delay), FakeCorpusRanker()
    async with AsyncExitStack() as stack:
        addrs = []
        for servicer, up in ((reader, reader_up), (ranker, ranker_up)):
            if up:
                server = grpc_server(servicer)
                port = await server.start()
                stack.push_async_callback(server.stop, 0)
            else:
                port = free_port()
            addrs.append(f"127.0.0.1:{port}")
        cfg = Settings(**{**FAST, **settings})
        reader_ch = grpc.aio.insecure_channel(addrs[0])
        ranker_ch = grpc.aio.insecure_channel(addrs[1])
        stack.push_async_callback(reader_ch.close)
        stack.push_async_callback(ranker_ch.close)
        brain = brain or ScriptedBrain()
        searcher = searcher or ScriptedSearcher()
        deps = Deps(
            settings=cfg,
            brain=brain,
            searcher=searcher,
            reader=ReaderClient(
                reader_ch, limit=asyncio.Semaphore(16), retry_delay_s=cfg.read_retry_delay_s
            ),
            ranker=RankerClient(ranker_ch, limit=asyncio.Semaphore(8)),
            corpus=CorpusClient(ranker_ch, limit=asyncio.Semaphore(8)),
        )
        yield Harness(cfg, deps, reader, ranker, brain, searcher)


def types(events: Sequence[Event]) -> list[str]:
    """The event types, in order."""
    return [e.type for e in events]


def first(events: Sequence[Event], type_: str) -> Event:
    """The first event of ``type_`` (fails the test when there is none)."""
    for event in events:
        if event.type == type_:
            return event
    raise AssertionError(f"no {type_} event in {types(events)}")


def warnings(events: Sequence[Event]) -> list[str]:
    """The warning codes, in order."""
    return [e.data["code"] for e in events if e.type == "warning"]
