"""A grpc.aio server bootstrap: health service, NOT_SERVING until warm, graceful SIGTERM stop."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

logger = logging.getLogger(__name__)

Register = Callable[[grpc.aio.Server], None]
WarmUp = Callable[[], Awaitable[None]]

# 64 MiB leaves room for RankChunks over 200 pages of ~300 KB markdown each.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class GrpcServer:
    """One grpc.aio server with the standard health service.

    ``start()`` binds (port 0 picks a free port, returned), serves health as NOT_SERVING,
    runs ``warm_up`` and only then reports SERVING. ``stop()`` flips health to NOT_SERVING
    first, so load balancers drain, then stops with a grace period.
    """

    def __init__(
        self,
        register: Register,
        *,
        host: str,
        port: int,
        service_names: Sequence[str] = (),
        warm_up: WarmUp | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
    ) -> None:
        self._register = register
        self._options = [
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            # Two servers must never share a port by accident (tests bind port 0 in parallel).
            ("grpc.so_reuseport", 0),
        ]
        self._interceptors = list(interceptors)
        # Created in start(): grpc.aio objects bind to the running event loop.
        self._server: grpc.aio.Server | None = None
        self._health: health.aio.HealthServicer | None = None
        self._address = f"{host}:{port}"
        self._service_names = ("", *service_names)
        self._warm_up = warm_up
        self.port = 0

    async def _set_all(self, status: int) -> None:
        if self._health is None:
            return
        for name in self._service_names:
            await self._health.set(name, status)

    async def start(self) -> int:
        """Bind, start serving and warm up; return the bound port."""
        self._server = grpc.aio.server(interceptors=self._interceptors, options=self._options)
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        self._register(self._server)
        self.port = self._server.add_insecure_port(self._address)
        if self.port == 0:
            raise OSError(f"could not bind {self._address}")
        await self._set_all(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self._server.start()
        if self._warm_up is not None:
            await self._warm_up()
        await self._set_all(health_pb2.HealthCheckResponse.SERVING)
        return self.port

    async def stop(self, grace: float) -> None:
        """Report NOT_SERVING, then stop, letting in-flight calls finish within ``grace``."""
        if self._server is None or self._health is None:
            return
        await self._health.enter_graceful_shutdown()
        await self._server.stop(grace)


async def serve_until_signal(
    server: GrpcServer, grace: float, on_stop: WarmUp | None = None
) -> None:
    """Start ``server`` and run until SIGTERM or SIGINT, then stop gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    port = await server.start()
    logger.info("serving", extra={"port": port})
    try:
        await stop.wait()
    finally:
        logger.info("stopping", extra={"grace_s": grace})
        await server.stop(grace)
        if on_stop is not None:
            await on_stop()
        logger.info("stopped")
