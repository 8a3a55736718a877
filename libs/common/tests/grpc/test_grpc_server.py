"""The gRPC bootstrap: NOT_SERVING until warm, SERVING after, NOT_SERVING on shutdown."""

from __future__ import annotations

import asyncio

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry_common.grpc_server import GrpcServer

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _status(port: int, service: str = "") -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        reply = await health_pb2_grpc.HealthStub(ch).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=2
        )
        return int(reply.status)


async def test_health_follows_warm_up_and_shutdown() -> None:
    warm = asyncio.Event()
    release = asyncio.Event()
    seen: list[int] = []

    async def warm_up() -> None:
        warm.set()
        await release.wait()

    server = GrpcServer(
        lambda _s: None, host="127.0.0.1", port=0, service_names=("demo.Svc",), warm_up=warm_up
    )
    # add_insecure_port happens in start(); probe once warm-up has begun.
    start = asyncio.create_task(server.start())
    await warm.wait()
    seen.append(await _status(server.port))
    seen.append(await _status(server.port, "demo.Svc"))
    release.set()
    port = await start
    assert port == server.port
    seen.append(await _status(port))
    seen.append(await _status(port, "demo.Svc"))
    assert seen == [NOT_SERVING, NOT_SERVING, SERVING, SERVING]
    await server.stop(0.5)
