"""`quarry mcp`'s bridge against a stand-in /mcp speaking the streamable-HTTP wire format (SSE
replies, 202 for notifications, problem+json refusals): what reaches stdout, in what order, and
the JSON-RPC error a request gets when the server refuses it or cannot be reached."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCMessage, JSONRPCResponse
from quarry_cli.mcp_bridge import Bridge

from tests.conftest import free_port


def _msg(**fields: Any) -> JSONRPCMessage:
    return JSONRPCMessage.model_validate({"jsonrpc": "2.0", **fields})


def _sse(*messages: dict[str, Any]) -> bytes:
    return b"".join(
        b"event: message\r\ndata: " + json.dumps(m).encode() + b"\r\n\r\n" for m in messages
    )


class StandIn:
    """The server's /mcp: records each POST, answers from ``replies`` by JSON-RPC method."""

    def __init__(self, replies: dict[str, httpx.Response]) -> None:
        self.replies = replies
        self.seen: list[tuple[str, dict[str, str]]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.seen.append((body["method"], dict(request.headers)))
        return self.replies[body["method"]]


async def _run(
    transport: httpx.AsyncBaseTransport, *messages: JSONRPCMessage, base: str = "http://q"
) -> list[dict[str, Any]]:
    """Forward ``messages`` one after the other; what the bridge wrote to stdout."""
    send, receive = anyio.create_memory_object_stream[SessionMessage](10)
    async with httpx.AsyncClient(base_url=base, transport=transport) as http:
        bridge = Bridge(http, send)
        for message in messages:
            await bridge.forward(message)
    send.close()
    return [
        m.message.model_dump(by_alias=True, mode="json", exclude_none=True) async for m in receive
    ]


def _sse_reply(*messages: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.Response(
        200, content=_sse(*messages), headers={"content-type": "text/event-stream", **headers}
    )


async def test_progress_then_result_reach_stdout_and_the_version_is_sent_after_initialize() -> None:
    init_result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {}}
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 7, "progress": 1, "message": "Reading 3 pages."},
    }
    result = {"jsonrpc": "2.0", "id": 2, "result": {"content": [], "isError": False}}
    server = StandIn(
        {
            "initialize": _sse_reply({"jsonrpc": "2.0", "id": 1, "result": init_result}),
            "notifications/initialized": httpx.Response(202),
            "tools/call": _sse_reply(progress, result),
        }
    )
    written = await _run(
        httpx.MockTransport(server),
        _msg(id=1, method="initialize", params={}),
        _msg(method="notifications/initialized"),
        _msg(id=2, method="tools/call", params={"name": "search", "_meta": {"progressToken": 7}}),
    )
    assert [m.get("id", m.get("method")) for m in written] == [1, "notifications/progress", 2]
    assert written[1]["params"]["message"] == "Reading 3 pages."
    assert "mcp-protocol-version" not in server.seen[0][1]
    assert server.seen[2][1]["mcp-protocol-version"] == "2025-06-18"


async def test_a_refused_request_is_a_jsonrpc_error_and_a_refused_notification_is_not() -> None:
    problem = httpx.Response(
        401,
        json={"title": "Unauthorized", "detail": "A valid bearer token is required."},
        headers={"content-type": "application/problem+json"},
    )
    server = StandIn({"tools/list": problem, "notifications/initialized": problem})
    written = await _run(
        httpx.MockTransport(server),
        _msg(method="notifications/initialized"),
        _msg(id="a", method="tools/list"),
    )
    assert len(written) == 1  # nothing answers a notification
    error = JSONRPCError.model_validate(written[0])
    assert error.id == "a"
    assert error.error.message == "Quarry answered 401: A valid bearer token is required."


async def test_an_unreachable_server_is_named_in_the_error() -> None:
    base = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    written = await _run(httpx.AsyncHTTPTransport(), _msg(id=3, method="ping"), base=base)
    error = JSONRPCError.model_validate(written[0])
    assert error.id == 3
    assert f"Quarry's API at {base}" in error.error.message
    assert "unreachable" in error.error.message


async def test_a_reply_that_is_not_jsonrpc_is_an_error_not_a_crash() -> None:
    server = StandIn({"ping": httpx.Response(200, json={"hello": "world"})})
    written = await _run(httpx.MockTransport(server), _msg(id=4, method="ping"))
    error = JSONRPCError.model_validate(written[0])
    assert "not MCP" in error.error.message


async def test_a_json_reply_passes_through() -> None:
    server = StandIn({"ping": httpx.Response(200, json={"jsonrpc": "2.0", "id": 5, "result": {}})})
    written = await _run(httpx.MockTransport(server), _msg(id=5, method="ping"))
    assert JSONRPCResponse.model_validate(written[0]).id == 5


async def test_cancelling_a_request_closes_its_stream_and_answers_nothing() -> None:
    opened, closed = asyncio.Event(), asyncio.Event()

    async def endless() -> AsyncIterator[bytes]:
        opened.set()
        try:
            await asyncio.Event().wait()
            yield b""
        finally:
            closed.set()

    def handler(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content)["method"] == "notifications/cancelled":
            return httpx.Response(202)
        return httpx.Response(200, content=endless(), headers={"content-type": "text/event-stream"})

    send, receive = anyio.create_memory_object_stream[SessionMessage](10)
    async with (
        httpx.AsyncClient(base_url="http://q", transport=httpx.MockTransport(handler)) as http,
        asyncio.TaskGroup() as tg,
    ):
        bridge = Bridge(http, send)
        bridge.start(tg, _msg(id=9, method="tools/call", params={"name": "research"}))
        await opened.wait()
        cancel = _msg(method="notifications/cancelled", params={"requestId": 9})
        bridge.start(tg, cancel)
    assert closed.is_set()
    send.close()
    assert [m async for m in receive] == []
