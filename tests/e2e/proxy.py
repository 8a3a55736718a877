"""A transparent HTTP proxy that counts requests in flight, put in front of the real LLM server.

llama_cpp.server has no metrics endpoint; the proxy is how a test sees whether the orchestrator
still has a request open at the LLM. It forwards bytes unchanged (streams included) and, when
its client goes away, closes the upstream request too, as a well-behaved hop must.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn

# Hop-by-hop headers and the framing the ASGI server recomputes.
_SKIP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}

Scope = dict[str, Any]
Message = dict[str, Any]


@dataclass
class Counts:
    """Requests seen and in flight (thread-safe)."""

    total: int = 0
    inflight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, delta: int) -> None:
        """Count a request starting (+1) or ending (-1)."""
        with self.lock:
            self.inflight += delta
            self.total += max(delta, 0)

    def open_requests(self) -> int:
        """Requests in flight right now."""
        with self.lock:
            return self.inflight


class _Proxy:
    def __init__(self, upstream: str, counts: Counts) -> None:
        self._upstream = upstream
        self._counts = counts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return  # lifespan: nothing to set up
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self._counts.add(1)
        try:
            async with asyncio.TaskGroup() as tg:
                forward = tg.create_task(self._forward(scope, body, send))
                watch = tg.create_task(_until_disconnect(receive))
                forward.add_done_callback(lambda _: watch.cancel())
                watch.add_done_callback(lambda t: t.cancelled() or forward.cancel())
        except* (httpx.HTTPError, OSError):
            with suppress(Exception):
                await send({"type": "http.response.start", "status": 502, "headers": []})
                await send({"type": "http.response.body", "body": b"upstream failed"})
        finally:
            self._counts.add(-1)

    async def _forward(self, scope: Scope, body: bytes, send: Any) -> None:
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in scope["headers"]
            if k.decode("latin-1").lower() not in _SKIP
        ]
        url = self._upstream + scope["path"]
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        timeout = httpx.Timeout(600.0, connect=5.0)
        async with (
            httpx.AsyncClient(timeout=timeout) as client,
            client.stream(scope["method"], url, headers=headers, content=body) as reply,
        ):
            out_headers = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in reply.headers.items()
                if k.lower() not in _SKIP
            ]
            await send(
                {"type": "http.response.start", "status": reply.status_code, "headers": out_headers}
            )
            async for chunk in reply.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})


async def _until_disconnect(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


@dataclass
class CountingProxy:
    """The running proxy: where to send requests, and its counts."""

    url: str
    counts: Counts


@contextmanager
def counting_proxy(upstream: str) -> Iterator[CountingProxy]:
    """Run the proxy to ``upstream`` on a free 127.0.0.1 port in a background thread."""
    counts = Counts()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        _Proxy(upstream.rstrip("/"), counts), log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield CountingProxy(f"http://127.0.0.1:{port}", counts)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
