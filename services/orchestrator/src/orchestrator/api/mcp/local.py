"""The MCP backend inside the orchestrator: tools run the agent in this process.

A tool call is the caller's like an API call: the principal the token check recorded on the MCP
request owns the sessions and runs it creates, and the session resource shows only its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request

from orchestrator.adapters.corpus.documents import pinned
from orchestrator.adapters.corpus.indexer import Counts
from orchestrator.api.mcp.backend import Domains, Progress, ToolError
from orchestrator.api.mcp.errors import tool_error
from orchestrator.api.shared.options import DomainLists, SearchOptions
from orchestrator.api.shared.ratelimit import Family, RateLimited, enforce
from orchestrator.api.shared.security import principal_of
from orchestrator.core.ask.service import Question, ask, prepare
from orchestrator.core.errors import DomainError
from orchestrator.core.events import EventSink, ResultCollector
from orchestrator.core.policy import domains_for, research_sources
from orchestrator.core.principals import Principal
from orchestrator.core.progress import progress_line, research_progress_line
from orchestrator.core.research.manager import ResearchManager
from orchestrator.core.research.views import report_markdown
from orchestrator.wiring.runtime import Runtime


class LocalBackend:
    """Runs questions, research and refreshes through the running app's runtime."""

    def __init__(
        self, runtime: Runtime, request: object = None, research: ResearchManager | None = None
    ) -> None:
        self._runtime = runtime
        self._research = research
        # The MCP call's HTTP request: the API's rate limits count tool calls like API calls.
        self._request = request if isinstance(request, Request) else None

    def _who(self) -> Principal:
        # No HTTP request, no identity: see nothing rather than someone's data.
        try:
            return principal_of(self._request.state if self._request is not None else None)
        except DomainError as err:
            raise tool_error(err) from None

    async def _limit(self, family: Family) -> None:
        if self._request is None:
            return
        try:
            await enforce(self._request, family)
        except RateLimited as err:
            raise tool_error(err) from None

    async def search(self, query: str, given: dict[str, Any], progress: Progress) -> Any:
        """One quick-search run in a new session; progress lines as the run goes."""
        await self._limit("questions")
        who = self._who()
        owner = who.id
        service = self._runtime.corpus
        try:
            asked = SearchOptions.model_validate(given)
            lists = asked.domains.model_dump() if asked.domains is not None else None
            searched, options = prepare(query, asked, self._runtime.deps.settings, lists)
            options = await pinned(
                options,
                service.documents if service is not None else None,
                who,
                asked.scope,
                asked.sources,
            )
        except DomainError as err:  # web search off, a bad domain or site: operator
            raise tool_error(err) from None
        except ValidationError as err:
            raise ToolError(f"Invalid search options: {_first_error(err)}") from None
        sink = EventSink()
        collector = ResultCollector()
        # A tool call is one question: the default Conversation keeps no turn, so no
        # mcp-<id> conversation is left behind.
        question = Question(searched, owner, uuid.uuid4().hex, options)

        async def produce() -> None:
            try:
                await ask(self._runtime.deps, self._runtime.sessions, sink, question)
            finally:
                sink.close()

        async with asyncio.TaskGroup() as tg:
            tg.create_task(produce())
            async for event in sink:
                collector.add(event)
                line = progress_line(event.type, event.data)
                if line:
                    await progress(line)
        return collector.result

    async def index(self, path: str, progress: Progress) -> Any:
        """Refresh a folder under the allowed roots; coalesced progress lines."""
        await self._limit("indexing")
        service = self._runtime.corpus
        if service is None:
            raise ToolError("Local documents are not configured on this server.")
        try:
            folder = service.resolve(path)
        except DomainError as err:
            raise tool_error(err) from None
        latest: list[Counts] = []
        task = service.start_refresh(folder, lambda counts: latest.append(counts))
        while not task.done():
            await asyncio.wait([task], timeout=1.0)
            if latest:
                counts, latest[:] = latest[-1], []
                await progress(f"Indexed {counts.done} of {counts.total} files.")
        try:
            result = task.result()
        except DomainError as err:
            raise tool_error(err) from None
        return result.as_dict()

    async def documents(self) -> Any:
        """The caller's documents, first 100 by path."""
        service = self._runtime.corpus
        if service is None:
            raise ToolError("Local documents are not configured on this server.")
        try:
            docs, total = await service.documents.page(self._who(), under="", offset=0, limit=100)
        except DomainError as err:
            raise tool_error(err) from None
        return {"documents": docs, "total": total, "offset": 0, "limit": 100}

    async def session(self, session_id: str) -> Any:
        """The caller's conversation, or None (also when it is someone else's)."""
        found = await self._runtime.sessions.get(self._who().id, session_id)
        return None if found is None else found.to_json()

    async def research(
        self, query: str, mode: str, progress: Progress, domains: Domains = None
    ) -> str:
        """One research run to its end; the tool call going away cancels the run."""
        await self._limit("research")
        if self._research is None:
            raise ToolError("Deep research is not available on this Quarry server.")
        manager = self._research.for_(self._who())
        settings = self._runtime.deps.settings
        lists = _domain_lists(domains)
        try:
            sources = research_sources(None, settings)
            searched, policy = domains_for(query, lists, settings)
            record = await manager.create(searched, mode, None, sources, domains=policy)
        except DomainError as err:  # search off, a bad domain, the in-flight cap
            raise tool_error(err) from None
        try:
            async for event in manager.follow(record.id, -1, manager.heartbeat_s):
                line = research_progress_line(event.type, event.data) if event else None
                if line:
                    await progress(line)
        except asyncio.CancelledError:
            with contextlib.suppress(DomainError):
                await manager.cancel(record.id)
            raise
        final, state = await manager.record(record.id)
        if final.status != "completed":
            error = (state.error or {}).get("message", final.status)
            raise ToolError(f"The research run ended {final.status}: {error}")
        return report_markdown(final, state)


def _domain_lists(domains: Domains) -> dict[str, list[str]] | None:
    """The tools' domain arguments checked like ``options.domains`` (sizes; the names are
    checked by the policy).

    Raises:
        ToolError: too many entries, or one too long.
    """
    if not domains:
        return None
    try:
        return DomainLists.model_validate(domains).model_dump()
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ToolError(f"Invalid domains ({where}): {first.get('msg', '')}") from None


def _first_error(err: ValidationError) -> str:
    """The first problem of a validation error, in words a calling model can act on."""
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}"
