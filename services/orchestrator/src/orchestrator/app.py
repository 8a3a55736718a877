"""The FastAPI application: built by ``create_app(settings)``; clients live in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from grpc_health.v1 import health_pb2, health_pb2_grpc

from orchestrator.config import Settings

# Readiness probes must answer fast even when a dependency hangs.
READY_PROBE_TIMEOUT_S = 2.0


async def _grpc_serving(channel: grpc.aio.Channel) -> bool:
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=READY_PROBE_TIMEOUT_S)
    except grpc.aio.AioRpcError:
        return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def create_app(settings: Settings) -> FastAPI:
    """Build the HTTP API for ``settings``."""
    channels: dict[str, grpc.aio.Channel] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        channels["reader"] = grpc.aio.insecure_channel(settings.reader_addr)
        channels["ranker"] = grpc.aio.insecure_channel(settings.ranker_addr)
        try:
            yield
        finally:
            for channel in channels.values():
                await channel.close()

    app = FastAPI(title="Quarry", version="0.1.0", lifespan=lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        """Readiness: every downstream answers; names those that do not."""
        down = [name for name, ch in channels.items() if not await _grpc_serving(ch)]
        if down:
            return JSONResponse({"status": "unavailable", "down": down}, status_code=503)
        return JSONResponse({"status": "ok", "down": []})

    return app
