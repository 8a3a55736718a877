"""The HTTP server's own bounds: head size, head and body deadlines, connections per client.

uvicorn bounds the request head only with its h11 protocol (``h11_max_incomplete_event_size``;
its default httptools protocol accepted a 64 MiB header), and h11 checks that size only while
a head is incomplete, so one write of a larger head passed. uvicorn has no deadline for a request
head or body, and limits connections only globally. ``GuardedH11Protocol`` adds the missing parts:

* the head bound holds however the bytes arrive: data reaches h11 in pieces smaller than the
  bound (so its incomplete-event check always applies), and a parsed head over it is refused;
* a connection that has not sent its request head within ``header_timeout_s`` of its first byte
  (or of connecting, or of its last response) is closed; a body not complete within
  ``body_timeout_s`` of its head gets a 408;
* one client address holds at most ``max_client_connections``. At that cap a new connection
  does not lose to the old ones: the one waiting longest *on its client* (no request head yet,
  an idle keep-alive, a body still arriving) is closed to make room. Only when every connection
  of the address has a request the server is working on is the newcomer refused (503). So one
  process holding idle or trickling connections cannot lock out the other clients of its
  address — all of loopback is one address, and so is everyone behind a reverse proxy or
  Docker's port proxy — it only recycles its own connections.

Every refusal is problem+json, sent before a lingering close (the rest of what the client sends
is read and dropped for a while), so the client reads the answer instead of a TCP reset.
"""

from __future__ import annotations

import asyncio
import http
import logging
from collections.abc import Callable
from typing import Any, cast

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from orchestrator.api.shared.problems import PROBLEM_JSON, problem_body
from orchestrator.config import Settings

logger = logging.getLogger(__name__)

# After a refusal: how long, and how many bytes, the rest of the request is read and dropped
# (a 1 MiB body answered 413 reaches its client; a far larger one may still meet a reset).
LINGER_S = 5.0
LINGER_BYTES = 4 * 1024 * 1024


class ConnectionLimits:
    """Per-process state the guarded connections share."""

    def __init__(
        self,
        header_timeout_s: float,
        max_per_client: int,
        *,
        body_timeout_s: float = 30.0,
        max_head_bytes: int = 64 * 1024,
    ) -> None:
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.max_per_client = max_per_client
        self.max_head_bytes = max_head_bytes
        self.open: dict[str, list[GuardedH11Protocol]] = {}
        self.refused = 0
        self.evicted = 0
        self.timed_out = 0


class HeadTooLarge(h11.RemoteProtocolError):
    """A complete request head over the bound (h11 checks only incomplete ones)."""


class BoundedConnection(h11.Connection):
    """h11's connection, refusing a parsed request head larger than ``max_head_bytes``."""

    def __init__(self, max_head_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head_bytes)
        self.max_head_bytes = max_head_bytes
        self.error: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as err:
            self.error = err
            raise
        if isinstance(event, h11.Request):
            size = len(event.method) + len(event.target) + 12
            size += sum(len(name) + len(value) + 4 for name, value in event.headers)
            if size > self.max_head_bytes:
                self.error = HeadTooLarge("request head too large", error_status_hint=431)
                raise self.error
        return event


class _GentleTransport:
    """The transport uvicorn's request cycle writes to: its ``close()`` lingers while the
    client is still sending a body (an early 413 or 401 with ``connection: close``)."""

    def __init__(self, raw: asyncio.Transport, owner: GuardedH11Protocol) -> None:
        self._raw = raw
        self._owner = owner

    def close(self) -> None:
        if self._owner.conn.their_state is h11.SEND_BODY:
            self._owner.linger()
        else:
            self._raw.close()

    def is_closing(self) -> bool:
        return self._raw.is_closing() or self._owner.lingering

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the bounds above."""

    limits: ConnectionLimits  # set on the subclass ``protocol_for`` makes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = BoundedConnection(self.limits.max_head_bytes)
        self._timer: asyncio.TimerHandle | None = None
        self._timer_for = ""  # "head" or "body"
        self._waiting_since = 0.0
        self._peer: str | None = None
        self.lingering = False
        self._dropped = 0
        self._raw: asyncio.Transport | None = None

    # --- connections per client ---

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._raw = transport
        self.transport = cast(asyncio.Transport, _GentleTransport(transport, self))
        peer = self.client[0] if self.client else "unknown"
        mine = self.limits.open.setdefault(peer, [])
        if len(mine) >= self.limits.max_per_client and not self._make_room(mine):
            self.limits.refused += 1
            logger.warning("too many busy connections from one client", extra={"peer": peer})
            self._refuse(503, "Too many connections from this address are busy; retry soon.")
            return
        self._peer = peer
        mine.append(self)
        self._wait_for("head")

    def _make_room(self, mine: list[GuardedH11Protocol]) -> bool:
        """Close the address's connection that has waited longest on its client, if any."""
        waiting = [c for c in mine if c.waiting_on_client()]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c._waiting_since)
        self.limits.evicted += 1
        logger.info("closed a waiting connection to make room for a new one")
        oldest.evict()
        return True

    def waiting_on_client(self) -> bool:
        """True while the server waits for this client's head or body, not on its own work."""
        return self._timer is not None and not self.lingering

    def evict(self) -> None:
        """Close to make room: a 503 if a request was begun, else just the connection."""
        self._forget_peer()
        if self._timer_for == "body" or self._head_begun():
            self._refuse(503, "The connection waited too long on its request; send it again.")
        else:
            self._disarm()
            self._close()

    def _forget_peer(self) -> None:
        if self._peer is None:
            return
        mine = self.limits.open.get(self._peer, [])
        if self in mine:
            mine.remove(self)
        if not mine:
            self.limits.open.pop(self._peer, None)
        self._peer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._forget_peer()
        super().connection_lost(exc)

    # --- head size and deadlines ---

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            self._drop(len(data))
            return
        # In pieces smaller than the bound, so h11's incomplete-event check sees every head.
        step = max(1024, self.limits.max_head_bytes // 4)
        for start in range(0, len(data), step):
            super().data_received(data[start : start + step])
            if self.transport.is_closing():
                return
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def _track(self) -> None:
        """Arm the deadline for what the server now waits on from the client, if anything."""
        if self.transport.is_closing():
            self._disarm()
            return
        their = self.conn.their_state
        idle = self.cycle is None or self.cycle.response_complete
        if their is h11.IDLE and idle:
            self._wait_for("head")
        elif their is h11.SEND_BODY and (idle or not self.cycle.response_started):
            # a body still arriving, before the answer or after an early one (413, 401)
            self._wait_for("body")
        else:
            self._disarm()

    def _wait_for(self, what: str) -> None:
        if self._timer is not None and self._timer_for == what:
            return
        self._disarm()
        limits = self.limits
        delay = limits.header_timeout_s if what == "head" else limits.body_timeout_s
        expire: Callable[[], None] = self._head_timeout if what == "head" else self._body_timeout
        self._timer = self.loop.call_later(delay, expire)
        self._timer_for = what
        self._waiting_since = self.loop.time()

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_for = ""

    def _head_begun(self) -> bool:
        return bool(self.conn.trailing_data[0])

    def _head_timeout(self) -> None:
        self._timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.limits.timed_out += 1
            logger.info("request head not received in time; connection closed")
            if self._head_begun():
                self._refuse(408, "The request head did not arrive in time.")
            else:
                self._close()

    def _body_timeout(self) -> None:
        self._timer = None
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            self.limits.timed_out += 1
            logger.info("request body not received in time; connection closed")
            self._refuse(408, "The request body did not arrive in time.")

    # --- refusals ---

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 cannot parse, as problem+json (431 for size)."""
        error = getattr(self.conn, "error", None)
        status = getattr(error, "error_status_hint", 400)
        if status == 431:
            detail = f"The request head is larger than {self.limits.max_head_bytes} bytes."
        else:
            detail = "The request is not valid HTTP/1.1."
        self._refuse(status if status in (400, 431) else 400, detail)

    def _refuse(self, status: int, detail: str) -> None:
        """Answer ``status`` at once (the app's own answer, if any, is dropped) and linger."""
        self._disarm()
        if self.cycle is not None:
            self.cycle.disconnected = True  # the app's receive() sees a disconnect
            self.cycle.message_event.set()
        started = self.cycle is not None and self.cycle.response_started
        if not started and not self.transport.is_closing():
            body = problem_body(status, detail)
            phrase = http.HTTPStatus(status).phrase
            head = (
                f"HTTP/1.1 {status} {phrase}\r\ncontent-type: {PROBLEM_JSON}\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            )
            self.transport.write(head.encode() + body)
        self.linger()

    def linger(self) -> None:
        """Close gently: send FIN after what was written, then read and drop what the client
        still sends (for LINGER_S, up to LINGER_BYTES), so its kernel does not answer our
        close with a reset that destroys the response before the client reads it."""
        raw = self._raw
        if raw is None or raw.is_closing() or self.lingering:
            return
        self._disarm()
        self.lingering = True
        if raw.can_write_eof():
            raw.write_eof()
        raw.resume_reading()
        self.loop.call_later(LINGER_S, raw.close)

    def _close(self) -> None:
        if self._raw is not None:
            self._raw.close()

    def _drop(self, size: int) -> None:
        self._dropped += size
        if self._dropped > LINGER_BYTES:
            self._close()


def protocol_for(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class bound to ``limits`` (uvicorn instantiates the class it is given)."""
    return type("BoundGuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})


def limits_for(settings: Settings) -> ConnectionLimits:
    """The connection bounds ``settings`` ask for."""
    return ConnectionLimits(
        settings.header_timeout_s,
        settings.max_client_connections,
        body_timeout_s=settings.body_timeout_s,
        max_head_bytes=settings.max_header_bytes,
    )


def server_config(app: ASGIApp, settings: Settings) -> uvicorn.Config:
    """uvicorn's configuration for ``app`` with the bounds from ``settings``."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        http=protocol_for(limits_for(settings)),
        h11_max_incomplete_event_size=settings.max_header_bytes,
        timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_s)),
    )
