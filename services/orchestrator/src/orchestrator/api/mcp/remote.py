"""The MCP backend of `quarry mcp` (stdio): tools call a running Quarry's HTTP API."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from orchestrator.api.mcp.backend import Domains, Progress, ToolError, research_progress_line
from orchestrator.api.openai.chat_format import progress_line
from orchestrator.core.events import Event, ResultCollector

NDJSON = {"Accept": "application/x-ndjson"}


class HttpBackend:
    """Quarry's API at ``base_url``; ``token`` is sent as a bearer token when set."""

    def __init__(self, base_url: str, *, token: str = "", timeout_s: float = 600.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        timeout = httpx.Timeout(timeout_s, connect=5.0)
        self._client = httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()

    async def _events(self, path: str, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            async with self._client.stream("POST", path, json=body, headers=NDJSON) as reply:
                if reply.status_code != 200:
                    await reply.aread()
                    raise ToolError(_problem_text(reply))
                async for line in reply.aiter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.TransportError as err:
            raise ToolError(
                f"Quarry's API at {self._client.base_url} is unreachable: {err}"
            ) from None

    async def search(self, query: str, options: dict[str, Any], progress: Progress) -> Any:
        """POST /v1/search over NDJSON; progress lines as events arrive."""
        body: dict[str, Any] = {"query": query}
        if options:
            body["options"] = options
        collector = ResultCollector()
        async for raw in self._events("/v1/search", body):
            event = Event(int(raw["seq"]), raw["type"], raw["data"])
            collector.add(event)
            line = progress_line(event.type, event.data)
            if line:
                await progress(line)
        return collector.result

    async def index(self, path: str, progress: Progress) -> Any:
        """POST /v1/corpus/refresh over NDJSON."""
        final: dict[str, Any] = {}
        async for raw in self._events("/v1/corpus/refresh", {"path": path}):
            if raw["type"] == "progress":
                data = raw["data"]
                await progress(f"Indexed {data.get('done', 0)} of {data.get('total', 0)} files.")
            elif raw["type"] == "error":
                raise ToolError(str(raw["data"].get("message", "Indexing failed.")))
            elif raw["type"] == "refresh.completed":
                final = raw["data"]
        return final

    async def documents(self) -> Any:
        """GET /v1/corpus/documents (the first 100, by path)."""
        try:
            reply = await self._client.get("/v1/corpus/documents", params={"limit": 100})
        except httpx.TransportError as err:
            raise ToolError(
                f"Quarry's API at {self._client.base_url} is unreachable: {err}"
            ) from None
        if reply.status_code != 200:
            raise ToolError(_problem_text(reply))
        return reply.json()

    async def session(self, session_id: str) -> Any:
        """GET /v1/sessions/{id}; None when there is none."""
        try:
            reply = await self._client.get(f"/v1/sessions/{session_id}")
        except httpx.TransportError as err:
            raise ToolError(
                f"Quarry's API at {self._client.base_url} is unreachable: {err}"
            ) from None
        if reply.status_code == 404:
            return None
        if reply.status_code != 200:
            raise ToolError(_problem_text(reply))
        return reply.json()

    async def research(
        self, query: str, mode: str, progress: Progress, domains: Domains = None
    ) -> str:
        """POST /v1/research, follow its SSE stream, then GET the report."""
        body: dict[str, Any] = {"query": query, "mode": mode}
        if domains:
            body["options"] = {"domains": domains}
        try:
            return await self._research(body, progress)
        except httpx.TransportError as err:
            raise ToolError(
                f"Quarry's API at {self._client.base_url} is unreachable: {err}"
            ) from None

    async def _research(self, body: dict[str, Any], progress: Progress) -> str:
        started = await self._client.post("/v1/research", json=body)
        if started.status_code != 202:
            raise ToolError(_problem_text(started))
        run_id = started.json()["research_id"]
        fields: dict[str, str] = {}
        last = ""
        async with self._client.stream("GET", f"/v1/research/{run_id}/events") as reply:
            async for line in reply.aiter_lines():
                if line and not line.startswith(":"):
                    key, _, value = line.partition(": ")
                    fields[key] = value
                elif not line and "event" in fields:
                    last = fields["event"]
                    text = research_progress_line(last, json.loads(fields.get("data", "{}")))
                    fields = {}
                    if text:
                        await progress(text)
        if last != "research.completed":
            raise ToolError(f"The research run {run_id} did not complete ({last or 'no events'}).")
        report = await self._client.get(f"/v1/research/{run_id}/report.md")
        if report.status_code != 200:
            raise ToolError(_problem_text(report))
        return report.text


def _problem_text(reply: httpx.Response) -> str:
    try:
        detail = reply.json().get("detail")
    except ValueError:
        detail = None
    return f"Quarry answered {reply.status_code}: {detail or reply.text[:200]}"
