"""`quarry mcp`: Quarry's MCP tools over stdio, for assistants that launch a command.

A bridge, not a second MCP server: each JSON-RPC message read on stdin is POSTed to the
server's streamable-HTTP endpoint (``--url`` + ``/mcp``, the bearer token from
``QUARRY_API_TOKEN``), and every message of the reply — one JSON object, or an SSE stream whose
progress notifications come before the result — is written to stdout. The tools, their
descriptions and their checks are the server's, so the two transports cannot drift apart, and
this client needs none of the server's code. stdout carries only the MCP protocol: a request
the server cannot be reached for (or refuses) is answered with a JSON-RPC error saying so, and
everything else worth saying goes to stderr.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx
from anyio.streams.memory import MemoryObjectSendStream
from httpx_sse import EventSource
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

from quarry_cli.status import EXIT_OK, problem_message

MCP_PATH = "/mcp"
# A research tool call streams for minutes; the server's SSE pings keep well inside this.
READ_TIMEOUT_S = 600.0
_SESSION = "mcp-session-id"
_VERSION = "mcp-protocol-version"


class Refused(Exception):
    """The server answered a message with an HTTP error."""


class Bridge:
    """Forwards client messages to ``/mcp`` and the server's replies back to the client."""

    def __init__(self, http: httpx.AsyncClient, write: MemoryObjectSendStream[SessionMessage]):
        self._http = http
        self._write = write
        # The session id (a stateful server) and the negotiated protocol version, once known.
        self._headers: dict[str, str] = {}
        self._inflight: dict[RequestId, asyncio.Task[None]] = {}

    def start(self, tg: asyncio.TaskGroup, message: JSONRPCMessage) -> None:
        """Forward ``message`` in its own task: a long tool call must not hold up the others."""
        root = message.root
        if isinstance(root, JSONRPCNotification) and root.method == "notifications/cancelled":
            # Closing the request's stream is what stops the work on the server (its run is
            # cancelled when the client goes away); the notification itself is forwarded too.
            wanted = (root.params or {}).get("requestId")
            if wanted is not None and (task := self._inflight.get(wanted)):
                task.cancel()
        task = tg.create_task(self.forward(message))
        if isinstance(root, JSONRPCRequest):
            self._inflight[root.id] = task
            task.add_done_callback(lambda _: self._inflight.pop(root.id, None))

    def cancel_all(self) -> None:
        """The client closed stdin: nobody is left to read the answers."""
        for task in list(self._inflight.values()):
            task.cancel()

    async def forward(self, message: JSONRPCMessage) -> None:
        """POST one message; a failure becomes the request's JSON-RPC error (or a stderr note)."""
        try:
            await self._post(message)
        except httpx.TransportError as err:
            await self._fail(
                message, f"Quarry's API at {self._http.base_url} is unreachable: {err}"
            )
        except Refused as err:
            await self._fail(message, str(err))
        except ValueError as err:  # pydantic's ValidationError: the reply was not JSON-RPC
            await self._fail(message, f"Quarry's /mcp answered something that is not MCP: {err}")

    async def _post(self, message: JSONRPCMessage) -> None:
        body = message.model_dump(by_alias=True, mode="json", exclude_none=True)
        initialize = (
            isinstance(message.root, JSONRPCRequest) and message.root.method == "initialize"
        )
        async with self._http.stream("POST", MCP_PATH, json=body, headers=self._headers) as reply:
            if reply.status_code >= 400:
                await reply.aread()
                raise Refused(f"Quarry answered {reply.status_code}: {problem_message(reply)}")
            if session := reply.headers.get(_SESSION):
                self._headers[_SESSION] = session
            if reply.status_code == 202:  # a notification or a response: nothing comes back
                return
            if reply.headers.get("content-type", "").startswith("text/event-stream"):
                async for event in EventSource(reply).aiter_sse():
                    if event.event == "message" and event.data:
                        await self._emit(event.data, initialize)
            else:
                await self._emit((await reply.aread()).decode("utf-8"), initialize)

    async def _emit(self, data: str, initialize: bool) -> None:
        message = JSONRPCMessage.model_validate_json(data)
        root = message.root
        if initialize and isinstance(root, JSONRPCResponse):
            version = root.result.get("protocolVersion")
            if isinstance(version, str):
                self._headers[_VERSION] = version
        await self._write.send(SessionMessage(message))

    async def _fail(self, message: JSONRPCMessage, text: str) -> None:
        root = message.root
        if isinstance(root, JSONRPCRequest):
            error = ErrorData(code=INTERNAL_ERROR, message=text)
            reply = JSONRPCError(jsonrpc="2.0", id=root.id, error=error)
            await self._write.send(SessionMessage(JSONRPCMessage(reply)))
        else:
            _note(text)


def _note(text: str) -> None:
    sys.stderr.write(f"quarry mcp: {text}\n")
    sys.stderr.flush()


async def serve(url: str, token: str) -> None:
    """Bridge stdin/stdout to ``url``'s /mcp until the client closes stdin."""
    headers: dict[str, Any] = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    timeout = httpx.Timeout(READ_TIMEOUT_S, connect=5.0)
    async with (
        httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout) as http,
        stdio_server() as (read, write),
    ):
        bridge = Bridge(http, write)
        try:
            async with asyncio.TaskGroup() as tg:
                async for item in read:
                    if isinstance(item, Exception):  # a line that is not JSON-RPC
                        why = " ".join(str(item).split())[:200]  # one stderr line
                        _note(f"ignored a message that is not JSON-RPC ({why})")
                        continue
                    bridge.start(tg, item.message)
                bridge.cancel_all()
        finally:
            await write.aclose()  # ends the SDK's stdout writer, so stdio_server can exit


def run_bridge(url: str, token: str) -> int:
    """Blocking entry for the CLI; returns the exit status."""
    asyncio.run(serve(url, token))
    return EXIT_OK
