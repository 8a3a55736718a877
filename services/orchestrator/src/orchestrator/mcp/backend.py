"""What the MCP tools need from Quarry, and how a result becomes text a small model reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

#: Receives one line of progress ("Reading 5 pages.").
Progress = Callable[[str], Awaitable[None]]

PASSAGE_CHARS = 400


class Backend(Protocol):
    """Quarry's API as the MCP tools use it: in the orchestrator's process, or over HTTP."""

    async def search(self, query: str, sources: list[str] | None, progress: Progress) -> Any:
        """A quick-search run's final result (the API's JSON result object)."""
        ...

    async def index(self, path: str, progress: Progress) -> Any:
        """Index a folder; the refresh's final counts."""
        ...

    async def session(self, session_id: str) -> Any:
        """A past conversation (the API's session object), or None."""
        ...


class ToolError(Exception):
    """A failure to report to the MCP client as the tool's error text."""


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def format_answer(result: dict[str, Any]) -> str:
    """A search result as plain text: the answer, then numbered sources with their passages."""
    if result.get("status") == "error":
        error = result.get("error") or {}
        raise ToolError(str(error.get("message") or "The search failed."))
    if result.get("clarifying_question"):
        return f"Quarry needs a clearer question: {result['clarifying_question']}"
    lines = [str(result.get("answer", "")).strip(), "", "Sources:"]
    for src in result.get("sources", []):
        lines.append(f"[{src['n']}] {src.get('title') or src['url']} — {src['url']}")
        passages = src.get("passages") or [src.get("excerpt", "")]
        lines.extend(f"    > {_clip(str(p), PASSAGE_CHARS)}" for p in passages if p)
    warnings = [w.get("message", "") for w in result.get("warnings", [])]
    if warnings:
        lines += ["", "Notes: " + " ".join(warnings)]
    if result.get("session_id"):
        lines += ["", f"Conversation: quarry://sessions/{result['session_id']}"]
    return "\n".join(lines).strip()


def format_session(session: dict[str, Any]) -> str:
    """A conversation as Markdown: each question, its answer and its sources."""
    parts = [f"# Session {session['session_id']}"]
    for turn in session.get("turns", []):
        parts.append(f"## {turn['question']}\n\n{turn['answer']}")
        sources = [f"[{s.get('n', i)}] {s['url']}" for i, s in enumerate(turn["sources"], 1)]
        if sources:
            parts.append("Sources:\n" + "\n".join(sources))
    return "\n\n".join(parts)
