"""Drive a run while watching the client: a disconnect cancels the run at once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Literal

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from orchestrator.api.shared.sse import KEEP_ALIVE, frame
from orchestrator.core.events import Event, EventSink

logger = logging.getLogger(__name__)

Runner = Callable[[EventSink], Awaitable[None]]
OnEvent = Callable[[Event], Awaitable[None]]
#: Turns one event into bytes for the wire (empty bytes: send nothing for it).
Encoder = Callable[[Event], bytes]


class ClientGone(Exception):
    """The HTTP client disconnected."""


async def _watch(receive: Receive) -> None:
    # After the request body, the only message left to receive is the disconnect.
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone


async def drive(
    run: Runner,
    receive: Receive,
    on_event: OnEvent,
    *,
    on_idle: Callable[[], Awaitable[None]] | None = None,
    idle_s: float = 15.0,
) -> bool:
    """Run ``run`` and pass its events to ``on_event`` until the run ends or the client goes.

    ``on_idle`` (if given) is called after every ``idle_s`` seconds without an event.
    Returns False when the client disconnected (the run was cancelled and awaited), else True.
    """
    sink = EventSink()

    async def produce() -> None:
        try:
            await run(sink)
        finally:
            sink.close()

    gone = False
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(produce())
            watcher = tg.create_task(_watch(receive))
            await _relay(sink, on_event, on_idle, idle_s)
            watcher.cancel()
    except* (ClientGone, OSError):
        logger.info("client disconnected; run cancelled")
        gone = True
    return not gone


async def _relay(
    sink: EventSink, on_event: OnEvent, on_idle: Callable[[], Awaitable[None]] | None, idle_s: float
) -> None:
    while True:
        if on_idle is None:
            event = await sink.get()
        else:
            try:
                async with asyncio.timeout(idle_s):
                    event = await sink.get()
            except TimeoutError:
                await on_idle()
                continue
        if event is None:
            return
        await on_event(event)


class EventStreamResponse(Response):
    """Streams a run's events as SSE or NDJSON, or through ``encode`` (e.g. OpenAI chunks).

    ``closing`` gives the bytes sent after the last event of a run that was not cancelled.
    """

    def __init__(
        self,
        run: Runner,
        fmt: Literal["sse", "ndjson"],
        *,
        encode: Encoder | None = None,
        closing: Callable[[], bytes] | None = None,
        keepalive_s: float = 15.0,
    ) -> None:
        # No body is set, so init_headers adds no Content-Length (the stream is chunked).
        self.status_code = 200
        self.media_type = "text/event-stream" if fmt == "sse" else "application/x-ndjson"
        self.background = None
        self.init_headers({"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self._run = run
        self._fmt = fmt
        self._encode: Encoder = encode or (lambda e: frame(fmt, e.seq, e.type, e.data))
        self._closing = closing
        self._keepalive_s = keepalive_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def start() -> None:
            nonlocal started
            if not started:
                started = True
                await send(
                    {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
                )

        async def on_event(event: Event) -> None:
            await start()
            chunk = self._encode(event)
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})

        async def on_idle() -> None:
            # SSE only: an NDJSON line must be a JSON object, and a comment has no NDJSON form.
            await start()
            await send({"type": "http.response.body", "body": KEEP_ALIVE, "more_body": True})

        idle = on_idle if self._fmt == "sse" else None
        if await drive(self._run, receive, on_event, on_idle=idle, idle_s=self._keepalive_s):
            await start()
            tail = self._closing() if self._closing else b""
            await send({"type": "http.response.body", "body": tail, "more_body": False})
