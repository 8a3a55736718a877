"""What the MCP tools need from Quarry, and how a result becomes text a small model reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from orchestrator.core.progress import clip

#: Receives one line of progress ("Reading 5 pages.").
Progress = Callable[[str], Awaitable[None]]
#: ``{"allow": [...], "deny": [...]}``: the request's domain lists (docs/sources.md), or None.
Domains = dict[str, list[str]] | None

PASSAGE_CHARS = 400


class Backend(Protocol):
    """Quarry's API as the MCP tools use it, in the orchestrator's process (api/mcp/local.py);
    `quarry mcp` reaches these same tools over /mcp (clients/cli, a stdio bridge)."""

    async def search(self, query: str, options: dict[str, Any], progress: Progress) -> Any:
        """A quick-search run's final result (the API's JSON result object); ``options`` are
        ``POST /v1/search``'s (only those the tool call gave, the domains among them)."""
        ...

    async def documents(self) -> Any:
        """The caller's indexed documents (``GET /v1/corpus/documents``' first page)."""
        ...

    async def index(self, path: str, progress: Progress) -> Any:
        """Index a folder; the refresh's final counts."""
        ...

    async def session(self, session_id: str) -> Any:
        """A past conversation (the API's session object), or None."""
        ...

    async def research(
        self, query: str, mode: str, progress: Progress, domains: Domains = None
    ) -> str:
        """A deep-research run's report (Markdown, with its numbered sources)."""
        ...


class ToolError(Exception):
    """A failure to report to the MCP client as the tool's error text."""


def format_answer(result: dict[str, Any]) -> str:
    """A search result as plain text: the answer, then numbered sources with their passages."""
    if result.get("status") == "error":
        error = result.get("error") or {}
        raise ToolError(str(error.get("message") or "The search failed."))
    if result.get("clarifying_question"):
        return f"Quarry needs a clearer question: {result['clarifying_question']}"
    lines = [str(result.get("answer", "")).strip()]
    unsupported = [
        x["text"].strip()
        for x in result.get("sentences") or []
        if x.get("support") == "unsupported"
    ]
    if result.get("support_score") is not None:
        lines += ["", f"Supported by the sources: {result['support_score']:.0%} of the claims."]
    if unsupported:
        lines.append("Not supported by any source: " + " | ".join(unsupported))
    lines += ["", "Sources:"]
    for src in result.get("sources", []):
        pages = _pages(src.get("pages") or [])
        lines.append(f"[{src['n']}] {src.get('title') or src['url']} — {src['url']}{pages}")
        passages = src.get("passages") or [src.get("excerpt", "")]
        lines.extend(f"    > {clip(str(p), PASSAGE_CHARS)}" for p in passages if p)
    dropped = (result.get("policy") or {}).get("dropped") or []
    if dropped:  # the domain policy's drops: the caller should know the answer is narrowed
        hosts = sorted({str(d.get("host", "")) for d in dropped})
        lines += ["", "Dropped by the source policy: " + ", ".join(hosts)]
    warnings = [w.get("message", "") for w in result.get("warnings", [])]
    if warnings:
        lines += ["", "Notes: " + " ".join(warnings)]
    if result.get("session_id"):
        lines += ["", f"Conversation: quarry://sessions/{result['session_id']}"]
    return "\n".join(lines).strip()


def _pages(pages: list[int]) -> str:
    if not pages:
        return ""
    return f" (p. {pages[0]})" if len(pages) == 1 else f" (pp. {', '.join(map(str, pages))})"


def format_documents(page: dict[str, Any]) -> str:
    """The caller's documents as a Markdown table (path, type, size, passages, indexed at)."""
    docs = page.get("documents") or []
    if not docs:
        return "No documents are indexed yet."
    lines = [
        f"{page.get('total', len(docs))} documents (first {len(docs)} shown).",
        "",
        "| path | type | size | passages | pages | indexed at |",
        "|---|---|---|---|---|---|",
    ]
    for d in docs:
        path = str(d["path"]).replace("|", "\\|")
        pages = d.get("pages") or ""
        lines.append(
            f"| {path} | {d['type']} | {d['size']} | {d['passages']} | {pages} | "
            f"{d.get('indexed_at') or ''} |"
        )
    return "\n".join(lines)


def format_session(session: dict[str, Any]) -> str:
    """A conversation as Markdown: each question, its answer and its sources."""
    parts = [f"# Session {session['session_id']}"]
    for turn in session.get("turns", []):
        parts.append(f"## {turn['question']}\n\n{turn['answer']}")
        sources = [f"[{s.get('n', i)}] {s['url']}" for i, s in enumerate(turn["sources"], 1)]
        if sources:
            parts.append("Sources:\n" + "\n".join(sources))
    return "\n\n".join(parts)
