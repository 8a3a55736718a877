"""Entry point of the research worker: `python -m orchestrator.worker`.

The orchestrator's image and settings, another process: it executes the research runs the API
replicas queue in PostgreSQL (core/research/work.py) and accepts no API traffic. It answers
``GET /healthz`` (alive) and ``GET /readyz`` (listening to the database, so it can claim runs)
on ``ORCHESTRATOR_HOST``:``ORCHESTRATOR_PORT`` for the kubelet. SIGTERM: the runs it holds save
their state and go back to the queue, where another worker resumes them at once.

Why a worker of its own (one API service, one research worker; docs/scaling.md): a research
run lasts minutes and spends them on the LLM, an API request milliseconds; separate processes
scale on separate signals (API pods on CPU, workers on the queue's depth), an API deploy never
interrupts a run, and a run outlives the replica a client happened to start it on.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import uuid
from contextlib import AsyncExitStack
from types import FrameType

import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from quarry_common import logconfig, telemetry
from quarry_common.settings import EXIT_BAD_CONFIG, load_settings

from orchestrator.adapters.store.notify import Notifier
from orchestrator.adapters.store.pg import PgStore
from orchestrator.config import Settings
from orchestrator.core.research.work import ResearchWorker
from orchestrator.core.store import CONTROL_CHANNEL, QUEUE_CHANNEL
from orchestrator.wiring.research import research_deps
from orchestrator.wiring.runtime import RuntimeFactory, production_runtime


class _Server(uvicorn.Server):
    """A requested stop is clean (uvicorn would re-raise a captured SIGTERM: exit -15)."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True


def health_app(notifier: Notifier) -> FastAPI:
    """The worker's probes."""
    app = FastAPI(title="Quarry research worker", openapi_url=None)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        ready = notifier.connected.is_set()
        body = {"status": "ok" if ready else "unavailable", "down": [] if ready else ["database"]}
        return JSONResponse(body, status_code=200 if ready else 503)

    return app


async def serve(settings: Settings, factory: RuntimeFactory = production_runtime) -> None:
    """Run the worker until the health server is told to stop (SIGTERM, SIGINT)."""
    # host-pid-random: unique, and says which process holds a run (logs, tests).
    worker_id = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    async with AsyncExitStack() as stack:
        runtime = await stack.enter_async_context(factory(settings))
        found = research_deps(runtime.deps)
        if found is None:
            raise SystemExit("the configured LLM cannot do deep research")
        queue = await PgStore.open(settings.database_url, settings.database_pool_max)
        stack.push_async_callback(queue.close)
        notifier = Notifier(settings.database_url, (QUEUE_CHANNEL, CONTROL_CHANNEL))
        await notifier.start()
        stack.push_async_callback(notifier.aclose)
        worker = ResearchWorker(queue, notifier, *found, runtime.sessions, worker_id)
        config = uvicorn.Config(
            health_app(notifier),
            host=settings.host,
            port=settings.port,
            log_config=None,
            access_log=False,
            lifespan="off",
        )
        working = asyncio.create_task(worker.run(), name="research-worker")
        try:
            await _Server(config).serve()
        finally:
            working.cancel()  # hands the held runs back to the queue
            await asyncio.wait([working])


def main() -> None:
    """Load settings, configure logging and tracing, work until SIGTERM."""
    settings = load_settings(Settings)
    if not settings.database_url:
        sys.stderr.write(
            "invalid configuration: the research worker needs ORCHESTRATOR_DATABASE_URL "
            "(a postgresql:// URL shared with the API)\n"
        )
        raise SystemExit(EXIT_BAD_CONFIG)
    logconfig.configure("research-worker", settings.log_level)
    tel = telemetry.setup("research-worker", instruments=("grpc_client", "httpx"))
    try:
        asyncio.run(serve(settings))
    finally:
        tel.shutdown()


if __name__ == "__main__":
    main()
