"""The HTTP server's bounds against real sockets on 127.0.0.1: a head over the bound however it
arrives, idle and trickling connections from one address, busy connections at the cap, and a
body trickled byte by byte. Every refusal must reach the client as problem+json."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import httpx
import pytest
import uvicorn
from orchestrator.api.http.server import server_config
from orchestrator.app import create_app
from orchestrator.config import Settings
from starlette.types import Receive, Scope, Send

pytestmark = pytest.mark.asyncio(loop_scope="module")
HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
#: The servers ``serve`` runs, by port: a test waits on what the server has seen, not on time.
SERVERS: dict[int, uvicorn.Server] = {}


@asynccontextmanager
async def serve(settings: Settings, app: Any = None) -> AsyncIterator[int]:
    """``app`` (default: the orchestrator) as `python -m orchestrator` serves it; its port."""
    config = server_config(app or create_app(settings), settings)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(30):
            while not (server.started or task.done()):  # noqa: ASYNC110 - no event to await
                await asyncio.sleep(0.02)
        assert server.started, "uvicorn did not start"
        port = int(server.servers[0].sockets[0].getsockname()[1])
        SERVERS[port] = server
        yield port
    finally:
        server.should_exit = True
        await task


async def accepted(port: int, count: int) -> None:
    """Wait until the server on ``port`` holds ``count`` connections (a busy machine may accept
    them well after the clients' connects returned)."""
    state = SERVERS[port].server_state
    async with asyncio.timeout(60):
        while len(state.connections) < count:  # noqa: ASYNC110 - uvicorn offers no event
            await asyncio.sleep(0.01)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], Any]:
    """Status, headers and JSON body of the one response on ``sock`` (read to EOF)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, json.loads(body)


async def healthy(port: int, times: int) -> list[int]:
    """Status codes of ``times`` fresh-connection /healthz requests (0: no answer)."""
    codes = []
    for _ in range(times):
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            try:
                codes.append((await c.get("/healthz")).status_code)
            except httpx.TransportError:
                codes.append(0)
    return codes


@pytest.mark.parametrize("size", [100 * 1024, 1024 * 1024])
async def test_a_head_over_the_bound_in_one_write_is_refused_with_431(size: int) -> None:
    async with serve(Settings(port=0, max_header_bytes=64 * 1024)) as port:

        def send() -> tuple[int, dict[str, str], Any]:
            head = HEAD + b"X-Big: " + b"a" * size + b"\r\n\r\n"
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(head)  # one write: h11 alone would parse it as one complete event
                return read_response(sock)

        status, headers, body = await asyncio.to_thread(send)
        assert status == 431
        assert headers["content-type"] == "application/problem+json"
        assert body["status"] == 431
        assert "65536 bytes" in body["detail"]
        assert await healthy(port, 1) == [200]


async def test_idle_and_trickling_connections_of_one_process_lock_out_no_other_client() -> None:
    # The defaults: 32 connections per address, and all of loopback is one address.
    settings = Settings(port=0, header_timeout_s=60)
    assert settings.max_client_connections == 32
    async with serve(settings) as port:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(32)]
        for i, (_, writer) in enumerate(held):
            if i % 2:  # half never send a byte, half send the start of a head and stop
                writer.write(HEAD)
                await writer.drain()
        await accepted(port, 32)
        # New clients on the same address are served; the held connections make the room.
        assert await healthy(port, 20) == [200] * 20
        closed = 0
        for reader, writer in held:
            with suppress(TimeoutError, OSError):
                async with asyncio.timeout(5):
                    closed += await reader.read() is not None
            writer.close()
        assert closed >= 20


async def test_busy_connections_at_the_cap_refuse_a_newcomer_with_503() -> None:
    release = asyncio.Event()
    started = 0

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal started
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        started += 1
        await release.wait()  # the server is working on this request
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    async with serve(Settings(port=0, max_client_connections=3), app) as port:
        busy = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        for _, writer in busy:
            writer.write(HEAD + b"\r\n")
        async with asyncio.timeout(10):
            while started < 3:  # noqa: ASYNC110 - a counter, no event to await
                await asyncio.sleep(0.01)

        def newcomer() -> tuple[int, dict[str, str], Any]:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(HEAD + b"\r\n")
                return read_response(sock)

        status, headers, body = await asyncio.to_thread(newcomer)
        assert (status, headers["content-type"]) == (503, "application/problem+json")
        assert "busy" in body["detail"]
        release.set()
        for reader, writer in busy:
            assert (await reader.readuntil(b"done")).startswith(b"HTTP/1.1 200")
            writer.close()


async def test_a_body_trickled_byte_by_byte_gets_408_and_is_closed() -> None:
    async with serve(Settings(port=0, body_timeout_s=1.0)) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        )

        answered = asyncio.create_task(reader.read())  # everything up to the server's close
        async with asyncio.timeout(60):
            while not answered.done():  # one byte every 0.2 s: the body never completes in time
                with suppress(OSError):
                    writer.write(b" ")
                await asyncio.wait([answered], timeout=0.2)
        answer = answered.result()
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout")
        assert b"application/problem+json" in answer
        assert answer.endswith(b'"The request body did not arrive in time."}')


async def test_a_body_over_the_bound_in_one_write_gets_its_413_not_a_reset() -> None:
    # The server answers before reading the body; closing with the body unread made the
    # kernel reset the connection, and the client lost the answer.
    async with serve(Settings(port=0, max_body_bytes=64 * 1024)) as port:

        def send() -> tuple[int, dict[str, str], Any]:
            body = b'{"query": "' + b"a" * (1024 * 1024) + b'"}'
            head = (
                b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            )
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(head + body)
                return read_response(sock)

        answers = [await asyncio.to_thread(send) for _ in range(3)]
        assert [(status, body["status"]) for status, _, body in answers] == [(413, 413)] * 3
