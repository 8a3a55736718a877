"""Wires the agent loop to in-process doubles of its ports (no gRPC server, no sockets)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from orchestrator.config import Settings
from orchestrator.core.ask.loop import RunOutcome, run_question
from orchestrator.core.ask.state import Deps, RunOptions
from orchestrator.core.events import Event, EventSink
from orchestrator.core.sessions import Turn

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher
from services.orchestrator.tests.unit.port_doubles import PortCorpus, PortRanker, PortReader

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
    reader: PortReader
    ranker: PortRanker
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
    corpus_up: bool | None = None,
    brain: ScriptedBrain | None = None,
    searcher: ScriptedSearcher | None = None,
    **settings: Any,
) -> AsyncIterator[Harness]:
    """Build the Deps over in-process doubles (``*_up=False``: that port is down; the corpus
    follows the ranker unless ``corpus_up`` says otherwise)."""
    reader = PortReader(pages or {}, delay=reader_delay, up=reader_up)
    ranker = PortRanker(up=ranker_up)
    cfg = Settings(**{**FAST, **settings})
    brain = brain or ScriptedBrain()
    searcher = searcher or ScriptedSearcher()
    deps = Deps(
        settings=cfg,
        brain=brain,
        searcher=searcher,
        reader=reader,
        ranker=ranker,
        corpus=PortCorpus(ranker.corpus, up=ranker_up if corpus_up is None else corpus_up),
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
