"""ReaderServicer: maps proto messages to the domain (reader.core) and errors to gRPC codes."""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import urlsplit

import grpc
from opentelemetry import trace
from quarry.v1 import reader_pb2, reader_pb2_grpc

from reader.core import Reader
from reader.errors import Overloaded, PoolClosed
from reader.memory import DomainMemory
from reader.model import ReadResult
from reader.policy import MAX_URL_LENGTH

logger = logging.getLogger(__name__)

# Longer than any URL we would fetch: such a field is a malformed request, not a bad URL.
MAX_URL_FIELD = 8 * MAX_URL_LENGTH
# gRPC metadata naming the question a read belongs to (sent by the orchestrator).
FAIR_KEY_HEADER = "x-quarry-run"

ReadContext = grpc.aio.ServicerContext[reader_pb2.ReadRequest, reader_pb2.ReadResponse]
ExtractContext = grpc.aio.ServicerContext[reader_pb2.ExtractRequest, reader_pb2.ReadResponse]


def to_proto(result: ReadResult, elapsed_ms: int) -> reader_pb2.ReadResponse:
    """Map a domain ReadResult to a ReadResponse."""
    reply = reader_pb2.ReadResponse(
        url=result.url,
        final_url=result.final_url,
        status=result.status.value,
        error=result.error,
        content_type=result.content_type,
        fetched_bytes=result.fetched_bytes,
        truncated=result.truncated,
        elapsed_ms=elapsed_ms,
        http_status=result.http_status,
        cached=result.cached,
        tier=result.tier,
        fetch_ms=result.fetch_ms,
        extract_ms=result.extract_ms,
    )
    if (render := result.render) is not None:
        reply.render.CopyFrom(
            reader_pb2.RenderInfo(
                status=render.status,
                reason=render.reason,
                ms=render.ms,
                requests=render.requests,
                refused=render.refused,
                bytes=render.bytes,
            )
        )
    if (doc := result.extracted) is not None:
        reply.title = doc.title
        reply.markdown = doc.markdown
        reply.published = doc.published
        reply.site_name = doc.site_name
        reply.language = doc.language
        reply.author = doc.author
    return reply


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _annotate(result: ReadResult) -> None:
    """Put the outcome on the RPC's server span (no URL path, no content)."""
    span = trace.get_current_span()
    span.set_attribute("quarry.reader.status", result.status.value)
    span.set_attribute("quarry.reader.bytes", result.fetched_bytes)
    span.set_attribute("quarry.reader.cached", result.cached)
    span.set_attribute("quarry.reader.truncated", result.truncated)
    span.set_attribute("quarry.reader.tier", result.tier)
    if result.render is not None:
        span.set_attribute("quarry.reader.render.status", result.render.status)
        span.set_attribute("quarry.reader.render.ms", result.render.ms)
        span.set_attribute("quarry.reader.render.refused", result.render.refused)
    if result.http_status:
        span.set_attribute("http.response.status_code", result.http_status)


def fair_key(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """Who is asking, for a fair share of the extraction workers: the question's id that the
    orchestrator sends as ``x-quarry-run`` metadata, else the caller's trace, else its peer."""
    for key, value in context.invocation_metadata() or ():
        if key == FAIR_KEY_HEADER and isinstance(value, str):
            return value[:128]
    span = trace.get_current_span().get_span_context()
    if span.is_valid:
        return format(span.trace_id, "032x")
    return str(context.peer() or "")


class ReaderServicer(reader_pb2_grpc.ReaderServicer):
    """The reader's RPCs over a :class:`Reader`."""

    def __init__(self, reader: Reader, memory: DomainMemory | None = None) -> None:
        self._reader = reader
        self._memory = memory

    async def Read(self, request: reader_pb2.ReadRequest, context: ReadContext) -> Any:
        """Fetch a URL under the network policy and extract its main content."""
        if not request.url or len(request.url) > MAX_URL_FIELD:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "url is required (max 16 KiB)")
        if request.HasField("timeout_ms") and request.timeout_ms == 0:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "timeout_ms must be positive")
        if request.HasField("max_bytes") and request.max_bytes == 0:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "max_bytes must be positive")
        start = time.monotonic()
        try:
            result = await self._reader.read(
                request.url,
                timeout_s=request.timeout_ms / 1000 if request.HasField("timeout_ms") else None,
                max_bytes=request.max_bytes if request.HasField("max_bytes") else None,
                deadline_s=context.time_remaining(),
                key=fair_key(context),
            )
        except (Overloaded, PoolClosed):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "reader is overloaded")
        elapsed = int((time.monotonic() - start) * 1000)
        _annotate(result)
        logger.info(
            "read",
            extra={
                "host": _host(request.url),
                "status": result.status.value,
                "ms": elapsed,
                "bytes": result.fetched_bytes,
                "cached": result.cached,
                "tier": result.tier,
                "render": result.render.status if result.render is not None else "",
                "render_ms": result.render.ms if result.render is not None else 0,
            },
        )
        return to_proto(result, elapsed)

    async def Extract(self, request: reader_pb2.ExtractRequest, context: ExtractContext) -> Any:
        """Extract a document the caller already has; no network access."""
        if not request.html:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "html is required")
        if len(request.url) > MAX_URL_FIELD or len(request.content_type) > 256:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "url or content_type too long")
        start = time.monotonic()
        try:
            result = await self._reader.extract(
                request.html,
                url=request.url,
                content_type=request.content_type,
                deadline_s=context.time_remaining(),
                key=fair_key(context),
            )
        except (Overloaded, PoolClosed):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "reader is overloaded")
        elapsed = int((time.monotonic() - start) * 1000)
        _annotate(result)
        logger.debug("extract", extra={"status": result.status.value, "ms": elapsed})
        return to_proto(result, elapsed)

    async def Domains(self, request: reader_pb2.DomainsRequest, context: Any) -> Any:
        """Debug: the per-domain reading memory, most recently used first."""
        reply = reader_pb2.DomainsResponse()
        if self._memory is None:
            return reply
        for domain, entry, advice, backoff in self._memory.snapshot(request.limit):
            stats = reply.domains.add(domain=domain, advice=advice, backoff_s=backoff)
            for name, rec in entry.tiers.items():
                stats.tiers.add(
                    tier=name,
                    attempts=rec.attempts,
                    ok=rec.ok,
                    empty=rec.empty,
                    failed=rec.failed,
                    timeouts=rec.timeouts,
                    failing_streak=rec.streak,
                    last_status=rec.last_status,
                    mean_ms=int(rec.mean_ms),
                    mean_chars=int(rec.mean_chars),
                )
        return reply
