"""The one place an event becomes bytes on a stream: SSE and NDJSON framing, the keep-alive.

Every stream the API serves — quick search, deep research, the corpus refresh, the
OpenAI-compatible chunks — frames through here, so they share one keep-alive comment and one
framing. SSE lines are written by sse-starlette's ``ServerSentEvent`` (already installed with
the MCP server): it splits multi-line data into ``data:`` lines and strips line breaks from ids
and event names, which hand-written ``b"event: %s"`` framing did not.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson
from sse_starlette import ServerSentEvent

StreamFormat = Literal["sse", "ndjson"]

#: An SSE comment: clients ignore it; proxies see traffic and keep the stream open.
KEEP_ALIVE = ServerSentEvent(comment="keep-alive", sep="\n").encode()
#: The OpenAI-compatible stream's last message.
DONE = ServerSentEvent(data="[DONE]", sep="\n").encode()


def sse(seq: int, type_: str, data: dict[str, Any]) -> bytes:
    """One SSE event: ``id`` the sequence number (what Last-Event-ID resumes from), ``event``
    the type, ``data`` the JSON payload."""
    payload = orjson.dumps(data).decode()
    return ServerSentEvent(data=payload, event=type_, id=str(seq), sep="\n").encode()


def sse_data(payload: dict[str, Any]) -> bytes:
    """A data-only SSE message (the OpenAI-compatible chunks have no id or event name)."""
    return ServerSentEvent(data=orjson.dumps(payload).decode(), sep="\n").encode()


def ndjson(seq: int, type_: str, data: dict[str, Any]) -> bytes:
    """One JSON object per line: ``{seq, type, data}``."""
    return orjson.dumps({"seq": seq, "type": type_, "data": data}) + b"\n"


def frame(fmt: StreamFormat, seq: int, type_: str, data: dict[str, Any]) -> bytes:
    """One event in the stream's format."""
    return sse(seq, type_, data) if fmt == "sse" else ndjson(seq, type_, data)
