"""A scripted LLM server speaking Ollama's native API and the OpenAI chat API over real HTTP.

Usage::

    async with FakeLLM(token_delay=0.01) as llm:
        llm.queue("judge", Say.json({"reasoning": "r", "sufficiency": "partial",
                                     "gap_queries": ["q2"]}))
        llm.queue("synthesis", Drop(after_tokens=3))
        ... point the client at llm.url (Ollama: /api/chat; OpenAI: /v1/chat/completions) ...
        assert llm.cancelled_streams == 1

Each chat request is classified as ``plan``, ``judge``, ``synthesis`` or ``other`` (by the
requested schema's properties, else by the prompt text). A reply comes from that kind's queue,
else from ``script(call)`` (which may return None), else from the default script, which answers
valid JSON for plan/judge and a cited answer built from the prompt's fenced sources.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

import pytest

from services.orchestrator.tests.fakes._http import (
    DropConnection,
    Request,
    Response,
    StreamResponse,
    TinyHTTPServer,
)
from services.orchestrator.tests.fakes.llm_script import (
    Call,
    Drop,
    Fail,
    Garbage,
    Hang,
    Kind,
    Reply,
    Say,
    Script,
    SeenRequest,
    StreamError,
    Wire,
    classify,
    default_reply,
    openai_schema,
    synthesis_from_sources,
)


class FakeLLM:
    """The scripted server; an async context manager. ``url`` is the base URL for both APIs."""

    def __init__(
        self,
        *,
        model: str = "fake-model",
        token_delay: float = 0.0,
        script: Script | None = None,
        reject_json_schema: bool = False,
        reject_strict_keywords: bool = False,
    ) -> None:
        self.model = model
        self.token_delay = token_delay
        self.script = script
        # llama-cpp-python's server answers response_format json_schema with HTTP 500.
        self.reject_json_schema = reject_json_schema
        # OpenAI's strict mode answers HTTP 400 to keywords it does not support (maxLength).
        self.reject_strict_keywords = reject_strict_keywords
        self.models_status = 200
        # End streams without Ollama's done line / OpenAI's [DONE] (the body just ends).
        self.omit_stream_end = False
        self.requests: list[SeenRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.disconnects = 0
        self.cancelled_streams = 0
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self._calls_by_request: dict[int, Call] = {}
        self._closing = asyncio.Event()
        self._changed = asyncio.Event()  # set whenever a counter moves (for wait_until)
        self._server = TinyHTTPServer(self._handle, self._on_disconnect, self._on_finish)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123`` (no ``/v1``)."""
        return self._server.url

    @property
    def calls(self) -> list[Call]:
        """The chat requests, in arrival order."""
        return [r.call for r in self.requests if r.call is not None]

    def calls_of(self, kind: Kind) -> list[Call]:
        """The chat requests of one kind."""
        return [c for c in self.calls if c.kind == kind]

    def queue(self, kind: Kind | Literal["any"], *replies: Reply) -> None:
        """Answer the next calls of ``kind`` (or of any kind) with ``replies``, in order."""
        self._queues[kind].extend(replies)

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Poll ``predicate`` until true (raises TimeoutError after ``timeout``)."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

    async def __aenter__(self) -> FakeLLM:
        await self._server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing.set()
        await self._server.stop()

    # --- transport ---

    def _on_disconnect(self, request: Request) -> None:
        self._changed.set()
        self.disconnects += 1
        call = self._calls_by_request.get(id(request))
        if call is not None:
            call.outcome = "disconnected"
            if call.stream:
                self.cancelled_streams += 1

    def _on_finish(self, request: Request) -> None:
        self._changed.set()
        call = self._calls_by_request.pop(id(request), None)
        if call is not None:
            self.in_flight -= 1
            if call.outcome == "pending":
                call.outcome = "answered"

    async def _handle(self, request: Request) -> Response | StreamResponse:
        body = request.json()
        seen = SeenRequest(request.method, request.path, request.headers, body)
        self.requests.append(seen)
        self._changed.set()
        path = request.path.rstrip("/")
        if request.method == "GET" and path in ("/api/tags", "/v1/models", ""):
            return self._models(path)
        if request.method != "POST" or path not in ("/api/chat", "/v1/chat/completions"):
            return Response.json({"error": f"no route {request.method} {path}"}, 404)
        if not isinstance(body, dict):
            return Response.json({"error": "invalid JSON body"}, 400)
        call = self._classify(path, body)
        seen.call = call
        self._calls_by_request[id(request)] = call
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return await self._reply(call)

    def _models(self, path: str) -> Response:
        if self.models_status != 200:
            return Response.json({"error": "scripted failure"}, self.models_status)
        if path == "/api/tags":
            return Response.json(
                {"models": [{"name": self.model, "model": self.model, "size": 1, "details": {}}]}
            )
        if path == "":
            return Response(200, b"Ollama is running", "text/plain")
        return Response.json(
            {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "me"}]}
        )

    def _classify(self, path: str, body: dict[str, Any]) -> Call:
        wire: Wire = "ollama" if path == "/api/chat" else "openai"
        if wire == "ollama":
            stream = body.get("stream", True) is not False  # Ollama streams when omitted
            fmt = body.get("format")
            schema = fmt if isinstance(fmt, dict) else None
        else:
            stream = bool(body.get("stream", False))
            schema = openai_schema(body.get("response_format"))
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages") or [])
        return Call(wire, body, stream, schema, classify(schema, prompt, stream))

    async def _pick(self, call: Call) -> Reply:
        for key in (call.kind, "any"):
            if self._queues[key]:
                return self._queues[key].popleft()
        if self.script is not None:
            reply = self.script(call)
            if inspect.isawaitable(reply):
                reply = await reply
            if reply is not None:
                return reply
        return default_reply(call)

    async def _reply(self, call: Call) -> Response | StreamResponse:
        refusal = self._refusal(call)
        if refusal is not None:
            return refusal
        reply = await self._pick(call)
        if isinstance(reply, Fail):
            call.outcome = "failed"
            return Response.json(_error_body(call.wire, reply.message), reply.status)
        if isinstance(reply, Hang) and (reply.after_tokens is None or not call.stream):
            await self._closing.wait()
            return Response.json(_error_body(call.wire, "server closing"), 503)
        if isinstance(reply, Drop) and (reply.after_tokens is None or not call.stream):
            call.outcome = "dropped"
            raise DropConnection
        if not call.stream:
            return self._whole(call, reply)
        return StreamResponse(self._stream(call, reply), content_type=_stream_type(call.wire))

    def _refusal(self, call: Call) -> Response | None:
        """The structured-output refusals of llama-cpp-python's server and OpenAI strict mode."""
        fmt = call.body.get("response_format") or {}
        if call.wire != "openai" or fmt.get("type") != "json_schema":
            return None
        if self.reject_json_schema:
            message = "Input should be 'text' or 'json_object'"
            return Response.json({"error": {"message": message, "code": 500}}, 500)
        spec = fmt.get("json_schema") or {}
        if self.reject_strict_keywords and spec.get("strict") and "maxLength" in json.dumps(spec):
            message = (
                f"Invalid schema for response_format '{spec.get('name')}': "
                "'maxLength' is not permitted."
            )
            return Response.json({"error": {"message": message, "type": "invalid_request"}}, 400)
        return None

    def _whole(self, call: Call, reply: Reply) -> Response:
        if isinstance(reply, Garbage):
            return Response(200, b'{"this is": not json', "application/json")
        if isinstance(reply, StreamError):
            return Response.json(_error_body(call.wire, reply.message), 500)
        text = reply.text if isinstance(reply, Say) else ""
        if call.wire == "ollama":
            return Response.json(self._ollama_chunk(text, done=True))
        return Response.json(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    async def _stream(self, call: Call, reply: Reply) -> AsyncIterator[bytes]:
        if isinstance(reply, Say):
            tokens, stop_at = reply.deltas(), None
        elif isinstance(reply, Drop):
            tokens, stop_at = Say(reply.text).deltas(), reply.after_tokens
        else:
            stop_at = getattr(reply, "after_tokens", 0) or 0
            tokens = Say(" ".join(["token"] * (stop_at + 1))).deltas()
        if call.wire == "openai":
            # llama-cpp-python's server interleaves SSE comment lines like this one
            yield b": ping - " + time.strftime("%Y-%m-%d %H:%M:%S").encode() + b"\r\n\r\n"
            yield self._sse({"role": "assistant", "content": ""}, None)
        for thought in reply.reasoning if isinstance(reply, Say) else ():
            if self.token_delay:
                await asyncio.sleep(self.token_delay)
            yield self._frame(call.wire, thought, reasoning=True)
        for i, token in enumerate(tokens):
            if stop_at is not None and i >= stop_at:
                break
            if self.token_delay:
                await asyncio.sleep(self.token_delay)
            yield self._frame(call.wire, token)
        if not isinstance(reply, Say):
            async for chunk in self._stream_failure(call, reply):
                yield chunk
            return
        if call.wire == "ollama":
            if not self.omit_stream_end:
                yield _ndjson(self._ollama_chunk("", done=True))
        else:
            yield self._sse({}, "stop")
            if not self.omit_stream_end:
                yield b"data: [DONE]\n\n"

    async def _stream_failure(self, call: Call, reply: Reply) -> AsyncIterator[bytes]:
        if isinstance(reply, Hang):
            await self._closing.wait()
        elif isinstance(reply, Drop):
            call.outcome = "dropped"
            raise DropConnection
        elif isinstance(reply, StreamError):
            call.outcome = "failed"
            err = {"error": reply.message}
            yield _ndjson(err) if call.wire == "ollama" else _sse_data({"error": {**err}})
        elif isinstance(reply, Garbage):
            call.outcome = "failed"
            yield b"{not json\n" if call.wire == "ollama" else b"data: {not json\n\n"

    def _frame(self, wire: Wire, token: str, *, reasoning: bool = False) -> bytes:
        if wire == "ollama":
            chunk = self._ollama_chunk("" if reasoning else token, done=False)
            if reasoning:
                chunk["message"]["thinking"] = token
            return _ndjson(chunk)
        return self._sse({"reasoning_content" if reasoning else "content": token}, None)

    def _ollama_chunk(self, text: str, *, done: bool) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "model": self.model,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "message": {"role": "assistant", "content": text},
            "done": done,
        }
        if done:
            chunk |= {"done_reason": "stop", "total_duration": 1000, "eval_count": 1}
        return chunk

    def _sse(self, delta: dict[str, Any], finish: str | None) -> bytes:
        return _sse_data(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )


def _error_body(wire: Wire, message: str) -> dict[str, Any]:
    if wire == "ollama":
        return {"error": message}
    return {"error": {"message": message, "type": "server_error"}}


def _stream_type(wire: Wire) -> str:
    return "application/x-ndjson" if wire == "ollama" else "text/event-stream; charset=utf-8"


def _ndjson(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _sse_data(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeLLM]:
    """A running FakeLLM with the default script."""
    async with FakeLLM() as fake:
        yield fake


__all__ = [
    "Call",
    "Drop",
    "Fail",
    "FakeLLM",
    "Garbage",
    "Hang",
    "Say",
    "SeenRequest",
    "StreamError",
    "default_reply",
    "fake_llm",
    "synthesis_from_sources",
]
