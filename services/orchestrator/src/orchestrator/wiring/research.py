"""Opening deep research: the research brain, and the manager the engine calls for.

- no ``ORCHESTRATOR_DATABASE_URL`` (the default): ResearchManager over SQLite, runs executed in
  this process;
- a database URL and ``ORCHESTRATOR_RESEARCH_EXECUTOR=worker``: QueuedResearchManager over
  PostgreSQL, runs executed by ``python -m orchestrator.worker`` processes;
- a database URL and ``inline``: ResearchManager over PostgreSQL (one API process only: at
  start it marks every run left running as interrupted).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, cast

from orchestrator.adapters.store.select import open_research_store
from orchestrator.core.ask.state import Deps
from orchestrator.core.research.context import ResearchLLM
from orchestrator.core.research.manager import ResearchManager
from orchestrator.core.sessions import SessionStore
from orchestrator.core.store import EVENTS_CHANNEL

if TYPE_CHECKING:
    from orchestrator.config import Settings
    from orchestrator.wiring.runtime import Runtime


def research_deps(deps: Deps) -> tuple[Deps, ResearchLLM] | None:
    """The Deps research runs use (their calls in the research lane) and their LLM; None when
    the Brain cannot do research."""
    brain = deps.brain
    if not (hasattr(brain, "structured") and hasattr(brain, "stream")):
        return None
    # Research calls go in the research lane (orchestrator/core/lanes.py): its judge calls too, so
    # its Deps carry the research brain.
    for_research = getattr(brain, "for_research", None)
    brain = for_research() if callable(for_research) else brain
    return dataclasses.replace(deps, brain=brain), cast(ResearchLLM, brain)


@asynccontextmanager
async def open_manager(
    deps: Deps, llm: ResearchLLM, sessions: SessionStore
) -> AsyncIterator[ResearchManager]:
    """The research manager the settings call for, started; stopped and closed after."""
    settings = deps.settings
    async with AsyncExitStack() as stack:
        if settings.database_url and settings.research_executor == "worker":
            from orchestrator.adapters.store.notify import Notifier
            from orchestrator.adapters.store.pg import PgStore
            from orchestrator.core.research.queued import QueuedResearchManager

            queue = await PgStore.open(settings.database_url, settings.database_pool_max)
            stack.push_async_callback(queue.close)
            notifier = Notifier(settings.database_url, (EVENTS_CHANNEL,))
            await notifier.start()
            stack.push_async_callback(notifier.aclose)
            manager: ResearchManager = QueuedResearchManager(queue, deps, llm, sessions, notifier)
        else:
            store = await open_research_store(settings)
            stack.push_async_callback(store.close)
            manager = ResearchManager(store, deps, llm, sessions)
        await manager.start()
        stack.push_async_callback(manager.aclose)
        yield manager


@asynccontextmanager
async def open_research(
    settings: Settings, runtime: Runtime
) -> AsyncIterator[ResearchManager | None]:
    """The research manager the settings call for, opened with the app; None when the Brain
    cannot do research."""
    found = research_deps(runtime.deps)
    if found is None:
        yield None
        return
    async with open_manager(*found, runtime.sessions) as manager:
        yield manager
