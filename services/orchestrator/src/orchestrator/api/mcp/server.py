"""The MCP server: tools and resources over a Backend, for stdio and streamable HTTP.

Built on the official MCP Python SDK (FastMCP). Descriptions are short and carry an example,
because the clients calling these tools are often small local models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, cast

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.server.transport_security import TransportSecuritySettings

from orchestrator.api.mcp.backend import (
    Backend,
    Domains,
    Progress,
    ToolError,
    format_answer,
    format_documents,
    format_session,
)

INSTRUCTIONS = (
    "Quarry is a private answer engine. Use `search` for a question that needs facts from the "
    "web or the user's documents; it answers with numbered sources. Use `research` only when "
    "the user asks for a long report."
)
SEARCH_DOC = """Answer a question from the web and the user's documents, with numbered sources.
Example: search(query="What is the boiling point of water at sea level?")
sources: "web", "local" (the user's documents) or both; leave empty for the default.
scope: a folder or file of the user's documents (as quarry://documents lists them) to pin the
question to; only its passages are used.
allow_domains / deny_domains: only / never these sites, e.g. allow_domains=["python.org"]
(site:python.org and -site:example.com in the query work too).
engines: SearXNG engines to ask, e.g. ["wikipedia", "arxiv"]; pageno: result page, 1-10."""
RESEARCH_DOC = """Write a long report with citations about a topic (takes minutes).
Example: research(query="Compare SQLite and PostgreSQL for a small web app")
mode: "deep-research" (default) or "due-diligence" (risks and recommendations).
allow_domains / deny_domains: only / never these sites, as for search."""
INDEX_DOC = """Add a folder of the user's documents to Quarry's local search.
Example: index(path="/home/me/notes")
The folder must be under a root the Quarry server allows."""

Source = Literal["web", "local"]
Mode = Literal["deep-research", "due-diligence"]
# The SDK's request context, typed for a server session (FastMCP injects it by annotation).
Ctx = Context[ServerSession, object]


def _domains(allow: list[str] | None, deny: list[str] | None) -> Domains:
    """The tools' flat arguments (easier for small models) as the API's ``options.domains``."""
    if not allow and not deny:
        return None
    return {"allow": list(allow or []), "deny": list(deny or [])}


def build_mcp(backend_of: Callable[[Ctx | None], Backend], *, http_path: str = "/mcp") -> FastMCP:
    """An MCP server whose tools call ``backend_of(ctx)`` (looked up per call, after start-up)."""
    mcp = FastMCP(
        "quarry",
        instructions=INSTRUCTIONS,
        streamable_http_path=http_path,
        stateless_http=True,
        # The orchestrator's own middleware checks Host, Origin and tokens for every path,
        # /mcp included: one policy in one place instead of a second, different allow-list.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    def reporter(ctx: Ctx) -> Progress:
        step = 0

        async def progress(line: str) -> None:
            nonlocal step
            step += 1
            await ctx.report_progress(step, None, line)

        return progress

    @mcp.tool(description=SEARCH_DOC)
    async def search(
        query: str,
        ctx: Ctx,
        sources: list[Source] | None = None,
        allow_domains: list[str] | None = None,
        deny_domains: list[str] | None = None,
        engines: list[str] | None = None,
        pageno: int | None = None,
        scope: str | None = None,
    ) -> str:
        progress = reporter(ctx)
        given = {
            "sources": sources,
            "engines": engines,
            "pageno": pageno,
            "domains": _domains(allow_domains, deny_domains),
            "scope": scope,
        }
        options = {k: v for k, v in given.items() if v}  # the API checks them (ToolError)
        result = await backend_of(ctx).search(query, options, progress)
        return format_answer(result)

    @mcp.tool(description=RESEARCH_DOC)
    async def research(
        query: str,
        ctx: Ctx,
        mode: Mode = "deep-research",
        allow_domains: list[str] | None = None,
        deny_domains: list[str] | None = None,
    ) -> str:
        domains = _domains(allow_domains, deny_domains)
        return await backend_of(ctx).research(query, mode, reporter(ctx), domains)

    @mcp.tool(description=INDEX_DOC)
    async def index(path: str, ctx: Ctx) -> str:
        progress = reporter(ctx)
        done = await backend_of(ctx).index(path, progress)
        counts = done.get("counts", done)
        return (
            f"Indexed {done.get('root', path)}: {counts.get('added', 0)} added, "
            f"{counts.get('updated', 0)} updated, {counts.get('removed', 0)} removed, "
            f"{counts.get('unchanged', 0)} unchanged, {counts.get('skipped', 0)} skipped."
        )

    @mcp.resource(
        "quarry://sessions/{session_id}",
        name="session",
        description="A past conversation: its questions, answers and sources, as Markdown.",
        mime_type="text/markdown",
    )
    async def session(session_id: str, ctx: Context) -> str:  # type: ignore[type-arg]
        # The request context carries the caller: a session is shown only to its owner. (The
        # annotation stays bare: the SDK validates a resource's arguments with pydantic, which
        # rebuilds a parametrised Context without its request context.)
        found = await backend_of(cast(Ctx, ctx)).session(session_id)
        if found is None:
            raise ToolError(f"No session {session_id!r} (it may have expired).")
        return format_session(found)

    @mcp.resource(
        "quarry://documents",
        name="documents",
        description="The user's indexed documents: path, type, size, passages, pages, indexed "
        "at. A path can be given to search as its scope.",
        mime_type="text/markdown",
    )
    async def documents() -> str:
        # No parameter, so a plain resource (a Context parameter would make it a template);
        # the caller is the request's, through the server's current context.
        return format_documents(await backend_of(cast(Ctx, mcp.get_context())).documents())

    return mcp
