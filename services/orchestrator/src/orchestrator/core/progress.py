"""A run's events as short lines of progress, for the faces whose clients show a run's progress
as text: the OpenAI-compatible streams (``reasoning_content``) and MCP (progress notifications).
One wording for both; no transport here, each face sends the lines its own way."""

from __future__ import annotations

from typing import Any


def clip(text: str, limit: int) -> str:
    """``text`` with its whitespace folded, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def progress_line(event_type: str, data: dict[str, Any]) -> str | None:
    """A quick-search event's line of progress, or None for quiet events."""
    if event_type == "plan" and data.get("optimized_query"):
        return f"Planning: searching for “{data['optimized_query']}”."
    if event_type == "search.completed":
        where = "local documents" if data.get("source") == "local" else "the web"
        return f"Searched {where} for “{data.get('query', '')}”: {data.get('count', 0)} results."
    if event_type == "read.started":
        return f"Reading {data.get('count', 0)} pages."
    if event_type == "chunks.ranked":
        return f"Picked {data.get('count', 0)} passages from {data.get('pages', 0)} pages."
    if event_type == "judge":
        return f"Judged the {data.get('stage', '')}: {data.get('verdict', '')}."
    if event_type == "policy" and data.get("dropped"):
        hosts = ", ".join(sorted({str(d.get("host", "")) for d in data["dropped"]}))
        return f"Source policy dropped {len(data['dropped'])} result(s) from {hosts}."
    if event_type == "warning":
        return f"Note: {data.get('message', '')}"
    if event_type == "sources":
        return f"Writing the answer from {len(data.get('sources', []))} sources."
    return None


def research_progress_line(kind: str, data: dict[str, Any]) -> str | None:
    """A deep-research event's line of progress, or None for the events not worth a line."""
    if kind == "phase.started":
        return f"Research phase: {data.get('phase')}."
    if kind == "scope.completed":
        titles = "; ".join(str(d.get("title")) for d in data.get("dimensions", []))
        return f"Researching: {titles}."
    if kind == "research.finding":
        return f"Finding on {data.get('title')}: {clip(str(data.get('key_finding', '')), 200)}"
    return None
