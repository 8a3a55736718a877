"""A tiny HTTP/1.1 server on asyncio streams for the scripted fakes (127.0.0.1, port 0).

Written for tests rather than taken from a framework because the fakes need exact control over
the wire: streaming with chunked encoding and per-token delays, dropping a connection mid-body,
hanging until the client gives up, and noticing *when* a client disconnects (so tests can assert
that cancellation reached the server). It speaks enough HTTP/1.1 for httpx: keep-alive,
Content-Length request bodies, chunked or sized responses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

logger = logging.getLogger(__name__)

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}
# Heads larger than this are refused; httpx's requests are far smaller.
_MAX_HEAD = 64 * 1024


class DropConnection(Exception):
    """Raised inside a response stream: the server aborts the TCP connection at that point."""


@dataclass
class Request:
    """One parsed HTTP request."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body as JSON (``None`` when it is empty or not JSON)."""
        if not self.body:
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@dataclass
class Response:
    """A complete response with a sized body."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, obj: Any, status: int = 200) -> Response:
        """A JSON response."""
        return cls(status=status, body=json.dumps(obj).encode())


@dataclass
class StreamResponse:
    """A response whose body is sent with chunked encoding as ``chunks`` yields."""

    chunks: AsyncIterator[bytes]
    status: int = 200
    content_type: str = "text/event-stream; charset=utf-8"


Handler = Callable[[Request], Awaitable[Response | StreamResponse]]
RequestHook = Callable[[Request], None]


class TinyHTTPServer:
    """Serve ``handler`` on 127.0.0.1:<free port> until ``stop()``."""

    def __init__(
        self,
        handler: Handler,
        on_disconnect: RequestHook | None = None,
        on_finish: RequestHook | None = None,
    ) -> None:
        """``on_disconnect`` runs when a client leaves mid-response; ``on_finish`` after each."""
        self._handler = handler
        self._on_disconnect = on_disconnect
        self._on_finish = on_finish
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self.port = 0

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123``."""
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Bind a free port and start accepting connections."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop accepting, cut every open connection and wait for their tasks."""
        if self._server is not None:
            self._server.close()
        # Aborting the transports ends each connection task through EOF, as a client closing
        # would; hung handlers are then cancelled by their disconnect watch.
        tasks = list(self._connections.items())
        for _, writer in tasks:
            writer.transport.abort()
        await asyncio.gather(*(task for task, _ in tasks), return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._connections.pop(task, None)
            writer.transport.abort()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; return True to keep the connection open for the next."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # the client closed an idle keep-alive connection
        if len(head) > _MAX_HEAD:
            return False
        request = _parse_head(head)
        length = int(request.headers.get("content-length", "0") or 0)
        if length:
            request.body = await reader.readexactly(length)
        work = asyncio.create_task(self._respond(request, writer))
        # While the response is produced, a read that returns EOF means the client went away
        # (httpx never pipelines, so no other bytes arrive before the response is complete).
        watch = asyncio.create_task(reader.read(1))
        try:
            done, _ = await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
            if work not in done and watch.result() == b"":
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await work
                self._disconnected(request)
                return False
            try:
                await work
            except DropConnection:
                return False
            except ConnectionError:
                self._disconnected(request)
                return False
            except Exception:  # a broken script mid-stream: cut the connection, keep serving
                logger.exception("fake server stream failed")
                return False
            return work.done() and watch not in done
        finally:
            for task in (work, watch):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            if self._on_finish is not None:
                self._on_finish(request)

    def _disconnected(self, request: Request) -> None:
        if self._on_disconnect is not None:
            self._on_disconnect(request)

    async def _respond(self, request: Request, writer: asyncio.StreamWriter) -> None:
        try:
            response = await self._handler(request)
        except (DropConnection, asyncio.CancelledError):
            raise
        except Exception:
            logger.exception("fake server handler failed")
            response = Response(500, b"fake server handler failed", "text/plain")
        if isinstance(response, Response):
            await _write_sized(writer, response)
        else:
            await _write_stream(writer, response)


def _parse_head(head: bytes) -> Request:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    parts = urlsplit(target)
    return Request(method, parts.path, dict(parse_qsl(parts.query)), headers, b"")


def _status_line(status: int) -> bytes:
    return f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}\r\n".encode()


async def _write_sized(writer: asyncio.StreamWriter, response: Response) -> None:
    headers = {
        "content-type": response.content_type,
        "content-length": str(len(response.body)),
        **response.headers,
    }
    fields = "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode("latin-1")
    writer.write(_status_line(response.status) + fields + b"\r\n" + response.body)
    await writer.drain()


async def _write_stream(writer: asyncio.StreamWriter, response: StreamResponse) -> None:
    head = (
        _status_line(response.status)
        + (
            f"content-type: {response.content_type}\r\ntransfer-encoding: chunked\r\n"
            "cache-control: no-cache\r\n\r\n"
        ).encode()
    )
    writer.write(head)
    await writer.drain()
    try:
        async for chunk in response.chunks:
            if chunk:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
    except DropConnection:
        writer.transport.abort()
        raise
    writer.write(b"0\r\n\r\n")
    await writer.drain()
