"""A scripted tool-calling model on 127.0.0.1, speaking the OpenAI wire format.

Requests that offer ``tools`` take the next scripted step: tool calls (streamed as
``tool_calls`` deltas, the arguments cut in two pieces the way real servers send them), text,
or a hang (nothing is sent until the client goes away). Requests without tools (the engine's
answer) stream ``answer``. Every request body is kept, and disconnects are counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from services.orchestrator.tests.fakes._http import (
    Request,
    Response,
    StreamResponse,
    TinyHTTPServer,
)

MODEL = "tool-model"


@dataclass(frozen=True)
class Calls:
    """One turn that calls tools: (name, arguments) pairs."""

    calls: tuple[tuple[str, dict[str, Any]], ...]


@dataclass(frozen=True)
class Text:
    """One turn that answers in text (no call)."""

    text: str


@dataclass(frozen=True)
class Hang:
    """One turn that never sends a byte."""


Step = Calls | Text | Hang


def call(name: str, **arguments: Any) -> Calls:
    """A turn with one call."""
    return Calls(((name, arguments),))


@dataclass
class FakeToolLLM:
    """The server: ``script`` for tool requests, ``answer`` for the others."""

    script: list[Step]
    answer: str = "Tides come from the Moon's pull [1]."
    # After the script: repeat its last step (a model that never stops calling).
    repeat_last: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    disconnects: int = 0
    _server: TinyHTTPServer | None = None

    @property
    def url(self) -> str:
        """Base URL."""
        assert self._server is not None
        return self._server.url

    def tool_requests(self) -> list[dict[str, Any]]:
        """Bodies of the requests that offered tools."""
        return [r for r in self.requests if "tools" in r]

    async def __aenter__(self) -> FakeToolLLM:
        self._server = TinyHTTPServer(self._handle, on_disconnect=self._gone)
        await self._server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        await self._server.stop()

    def _gone(self, request: Request) -> None:
        self.disconnects += 1

    async def _handle(self, request: Request) -> Response | StreamResponse:
        if request.method == "GET" and request.path.endswith("/models"):
            return Response.json({"object": "list", "data": [{"id": MODEL}]})
        body = request.json() or {}
        self.requests.append(body)
        if "tools" not in body:
            return StreamResponse(self._text(self.answer))
        step = self._next()
        if isinstance(step, Hang):
            return StreamResponse(self._hang())
        if isinstance(step, Text):
            return StreamResponse(self._text(step.text))
        return StreamResponse(self._calls(step, len(self.tool_requests())))

    def _next(self) -> Step:
        if self.script and (len(self.script) > 1 or not self.repeat_last):
            return self.script.pop(0)
        return self.script[0] if self.script else Text("")

    async def _text(self, text: str) -> AsyncIterator[bytes]:
        for word in text.split(" "):
            yield _sse({"content": word + " "}, None)
        yield _sse({}, "stop")
        yield b"data: [DONE]\n\n"

    async def _calls(self, step: Calls, turn: int) -> AsyncIterator[bytes]:
        for i, (name, arguments) in enumerate(step.calls):
            text = json.dumps(arguments)
            cut = len(text) // 2
            head = {"index": i, "id": f"call_{turn}_{i}", "type": "function"}
            yield _sse({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
            for piece in (text[:cut], text[cut:]):
                yield _sse({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        yield _sse({}, "tool_calls")
        usage = {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}
        yield b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    async def _hang(self) -> AsyncIterator[bytes]:
        await asyncio.Event().wait()
        yield b""  # pragma: no cover - never reached


def _sse(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"
