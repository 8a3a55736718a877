"""The MCP backend inside the orchestrator: tools run the agent in this process."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from starlette.requests import Request

from orchestrator.api.chat_format import progress_line
from orchestrator.api.models import SearchOptions
from orchestrator.api.ratelimit import Family, RateLimited, enforce
from orchestrator.api.routes import answer_in_session, run_options
from orchestrator.api.runtime import Runtime
from orchestrator.corpus.indexer import Counts
from orchestrator.errors import ApiProblem
from orchestrator.events import EventSink, ResultCollector
from orchestrator.mcp.backend import Progress, ToolError


class LocalBackend:
    """Runs questions and refreshes through the running app's runtime."""

    def __init__(self, runtime: Runtime, request: object = None) -> None:
        self._runtime = runtime
        # The MCP call's HTTP request: the API's rate limits count tool calls like API calls.
        self._request = request if isinstance(request, Request) else None

    async def _limit(self, family: Family) -> None:
        if self._request is None:
            return
        try:
            await enforce(self._request, family)
        except RateLimited as err:
            raise ToolError(f"{err.detail} Retry in {err.retry_after} s.") from None

    async def search(self, query: str, sources: list[str] | None, progress: Progress) -> Any:
        """One quick-search run in a new session; progress lines as the run goes."""
        await self._limit("questions")
        options = run_options(self._runtime, SearchOptions.model_validate({"sources": sources}))
        sink = EventSink()
        collector = ResultCollector()
        run_id = uuid.uuid4().hex

        async def produce() -> None:
            try:
                await answer_in_session(
                    self._runtime,
                    sink,
                    query=query,
                    session_id=f"mcp-{run_id}",
                    options=options,
                    run_id=run_id,
                )
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
        except ApiProblem as err:
            raise ToolError(err.detail) from None
        latest: list[Counts] = []
        task = service.start_refresh(folder, lambda counts: latest.append(counts))
        while not task.done():
            await asyncio.wait([task], timeout=1.0)
            if latest:
                counts, latest[:] = latest[-1], []
                await progress(f"Indexed {counts.done} of {counts.total} files.")
        try:
            result = task.result()
        except ApiProblem as err:
            raise ToolError(err.detail) from None
        return result.as_dict()

    async def session(self, session_id: str) -> Any:
        """A conversation of this server, or None."""
        found = self._runtime.sessions.get(session_id)
        return None if found is None else found.to_json()
