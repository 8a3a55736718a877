"""The FastAPI application: built by ``create_app(settings)``; clients live in the lifespan."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from mcp.server.fastmcp import FastMCP

from orchestrator.api.http.corpus_routes import UPLOAD_PATHS
from orchestrator.api.http.corpus_routes import router as corpus_router
from orchestrator.api.http.export_routes import router as export_router
from orchestrator.api.http.research_routes import router as research_router
from orchestrator.api.http.routes import router
from orchestrator.api.http.schedule_routes import router as schedule_router
from orchestrator.api.http.settings_routes import router as settings_router
from orchestrator.api.mcp.local import LocalBackend
from orchestrator.api.mcp.server import build_mcp
from orchestrator.api.openai.routes import router as openai_router
from orchestrator.api.shared.problems import BodyGuard, install_problem_handlers
from orchestrator.api.shared.ratelimit import RateLimiter
from orchestrator.api.shared.security import install_security, load_tokens
from orchestrator.api.web.routes import install_ui, is_public_path
from orchestrator.config import Settings
from orchestrator.core.events import API_VERSION
from orchestrator.core.principals import Credential
from orchestrator.core.schedules.service import Clock
from orchestrator.wiring.research import open_research
from orchestrator.wiring.runtime import Probe, Runtime, RuntimeFactory, production_runtime
from orchestrator.wiring.schedules import open_schedules

logger = logging.getLogger(__name__)

DESCRIPTION = """Quarry answers questions from the web and from local documents with cited sources.

`POST /v1/search` streams the run as events (Server-Sent Events by default,
NDJSON with `Accept: application/x-ndjson`) or returns the final result with
`Accept: application/json`. Every event, its fields and an example stream are
described in docs/api.md. `GET /v1/corpus` and `POST /v1/corpus/refresh` show and
refresh the indexed local documents. `/v1/research` runs deep research: long, cited reports
that survive disconnects and restarts. Errors are RFC 7807 `application/problem+json`.
"""

# /readyz while the LLM does not answer: with `make run` the embedded model is usually loading.
LLM_LOADING = (
    "The LLM server does not answer yet: the embedded model may still be loading. Questions "
    "asked now wait for it (up to LLM_WAIT_S seconds)."
)


async def _probe(name: str, probe: Probe, timeout: float) -> bool:
    # A hanging dependency must not hang readiness: each probe gets a hard deadline.
    try:
        async with asyncio.timeout(timeout):
            return await probe(timeout)
    except TimeoutError:
        return False
    except Exception:  # a probe that fails for any reason means "not ready", never a 500
        logger.warning("readiness probe failed", extra={"dependency": name}, exc_info=True)
        return False


def create_app(
    settings: Settings,
    runtime_factory: RuntimeFactory | None = None,
    tokens: Sequence[str | Credential] | None = None,
    clock: Clock | None = None,
) -> FastAPI:
    """Build the HTTP API for ``settings``; ``runtime_factory`` lets tests inject dependencies.

    ``tokens`` are the API's bearer tokens, bare (unnamed users) or with their principals
    (``None``: read them from ``settings``). ``clock`` is the schedules' clock (tests pass a
    test clock; ``None``: the real one).

    Raises:
        ConfigError: the token settings are unusable (see ``security.load_tokens``).
    """
    factory = runtime_factory or production_runtime
    tokens = load_tokens(settings) if tokens is None else tokens

    # MCP over streamable HTTP at /mcp: its tools run in this process, on the app's runtime.
    mcp = build_mcp(
        lambda ctx: LocalBackend(
            app.state.runtime,
            ctx.request_context.request if ctx else None,
            getattr(app.state, "research", None),
        )
    )
    app = FastAPI(
        title="Quarry",
        version=f"{API_VERSION}.0.0",
        description=DESCRIPTION,
        lifespan=_lifespan(settings, factory, bool(tokens), mcp, clock),
    )
    install_problem_handlers(app)
    app.add_middleware(BodyGuard, max_bytes=settings.max_body_bytes, exempt=UPLOAD_PATHS)
    # Access control (Host allow-list, CORS, tokens) wraps everything, the body guard included.
    install_security(app, settings, tokens, public_path=is_public_path)
    # The faces' routes, in this order (the OpenAPI document lists them so).
    faces = (router, corpus_router, research_router, export_router, schedule_router)
    for face in (*faces, openai_router, settings_router):
        app.include_router(face)
    app.router.routes.extend(mcp.streamable_http_app().routes)
    _install_ops(app, settings)
    # The web UI (static files at / and /ui; see orchestrator/web).
    install_ui(app)
    return app


def _lifespan(
    settings: Settings, factory: RuntimeFactory, tokens: bool, mcp: FastMCP, clock: Clock | None
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The app's lifespan: the rate limiter, the runtime, the MCP sessions, deep research and
    its schedules."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.rate_limiter = limiter = RateLimiter(settings, tokens=tokens)
        try:
            async with factory(settings) as runtime, mcp.session_manager.run():
                app.state.runtime = runtime
                # Deep research: its runs, persisted in the embedded database.
                async with open_research(settings, runtime) as research:
                    app.state.research = research
                    if research is None:
                        yield
                        return
                    # Scheduled research: saved questions run by the research machinery.
                    async with open_schedules(settings, research, clock) as schedules:
                        app.state.schedules = schedules
                        yield
        finally:
            await limiter.aclose()

    return lifespan


def _install_ops(app: FastAPI, settings: Settings) -> None:
    """/healthz and /readyz."""

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"])
    async def readyz() -> JSONResponse:
        """Readiness: reader, ranker, SearXNG and the LLM answer; names those that do not."""
        runtime: Runtime = app.state.runtime
        names = list(runtime.probes)
        async with asyncio.TaskGroup() as tg:
            tasks = [
                tg.create_task(_probe(n, runtime.probes[n], settings.ready_timeout_s))
                for n in names
            ]
        down = [n for n, t in zip(names, tasks, strict=True) if not t.result()]
        body: dict[str, Any] = {
            "status": "unavailable" if down else "ok",
            "down": down,
            # gRPC dependencies between connections (e.g. just restarted): retried within 1 s.
            "reconnecting": sorted(n for n, check in runtime.channels.items() if check()),
            "web_search": settings.web_search,
        }
        if runtime.search is not None and settings.web_search == "on":
            body["search"] = runtime.search.status()
        if "llm" in down:
            body["detail"] = LLM_LOADING
        return JSONResponse(body, status_code=503 if down else 200)
