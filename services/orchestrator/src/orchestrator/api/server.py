"""The HTTP server's own bounds: header size, header-read time and connections per client.

uvicorn bounds the request head only with its h11 protocol (``h11_max_incomplete_event_size``;
its default httptools protocol accepted a 64 MiB header), has no deadline for reading a request
head (its keep-alive timer only runs between requests, and the first byte of a request cancels
it), and limits connections only globally. ``GuardedH11Protocol`` adds the missing two:
a connection that has not sent a complete request head within ``header_timeout_s`` of its
first byte (or of connecting) is closed, and a client address holding
``max_client_connections`` connections has further ones closed at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from orchestrator.config import Settings

logger = logging.getLogger(__name__)


class ConnectionLimits:
    """Per-process state the guarded connections share."""

    def __init__(self, header_timeout_s: float, max_per_client: int) -> None:
        self.header_timeout_s = header_timeout_s
        self.max_per_client = max_per_client
        self.open: Counter[str] = Counter()
        self.refused = 0
        self.timed_out = 0


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline and a per-client connection cap."""

    limits: ConnectionLimits  # set on the subclass ``protocol_for`` makes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._peer: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = self.client[0] if self.client else "unknown"
        if self.limits.open[peer] >= self.limits.max_per_client:
            self.limits.refused += 1
            logger.warning("too many connections from one client; closed", extra={"peer": peer})
            transport.abort()
            return
        self._peer = peer
        self.limits.open[peer] += 1
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            self.limits.open[self._peer] -= 1
            if self.limits.open[self._peer] <= 0:
                del self.limits.open[self._peer]
            self._peer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # IDLE: the request head is not complete yet (a new connection, or the next request on a
        # kept-alive one). Any other state: the head arrived; the app's own limits take over.
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self._head_timer is None:
                self._arm()
        else:
            self._disarm()

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timeout)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.limits.timed_out += 1
            logger.info("request head not received in time; connection closed")
            self.transport.close()


def protocol_for(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class bound to ``limits`` (uvicorn instantiates the class it is given)."""
    return type("BoundGuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})


def server_config(app: ASGIApp, settings: Settings) -> uvicorn.Config:
    """uvicorn's configuration for ``app`` with the bounds from ``settings``."""
    limits = ConnectionLimits(settings.header_timeout_s, settings.max_client_connections)
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        http=protocol_for(limits),
        h11_max_incomplete_event_size=settings.max_header_bytes,
        timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_s)),
    )
