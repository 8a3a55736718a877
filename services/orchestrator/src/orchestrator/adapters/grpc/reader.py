"""The reader adapter (agent port Reader): quarry.v1.Reader over one long-lived channel,
per-call timeouts, one retry (tenacity, as every retry in the project)."""

from __future__ import annotations

import asyncio
import logging
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from quarry.v1 import reader_pb2, reader_pb2_grpc
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    retry_if_result,
    wait_fixed,
)

from orchestrator.core.ask.domain import PageRead, ReaderUnavailable
from orchestrator.core.context import RUN_KEY

logger = logging.getLogger(__name__)

_Status = reader_pb2.ReadResponse.Status
# Codes that say "the reader is not there (or cannot do this at all)", not "this URL failed".
_DOWN_CODES = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.INTERNAL}
)
# Below this much time a call cannot usefully start: fail it locally instead.
_MIN_CALL_S = 0.05
# The question a read belongs to, sent as gRPC metadata: the reader shares its extraction
# workers fairly between questions. Set once per run (contextvars reach the run's tasks).
RUN_KEY_HEADER = "x-quarry-run"


def _run_metadata() -> tuple[tuple[str, str], ...] | None:
    key = RUN_KEY.get()
    return ((RUN_KEY_HEADER, key),) if key else None


class ReaderClient:
    """Reads URLs through the reader service; at most ``limit`` calls in flight process-wide."""

    def __init__(
        self, channel: grpc.aio.Channel, *, limit: asyncio.Semaphore, retry_delay_s: float
    ) -> None:
        self._stub = reader_pb2_grpc.ReaderStub(channel)
        self._health = health_pb2_grpc.HealthStub(channel)
        self._limit = limit
        self._retry_delay = retry_delay_s

    async def read(self, url: str, *, timeout: float) -> PageRead:
        """Read ``url`` within ``timeout`` seconds, retrying once on a network error (the
        reader's NETWORK_ERROR, or the reader UNAVAILABLE) when time is left for it.

        Raises:
            ReaderUnavailable: the reader is down or does not implement Read.
        """
        start = time.monotonic()
        end = start + timeout
        tries = 0

        async def once() -> PageRead:
            nonlocal tries
            tries += 1
            return await self._read_once(url, start, end, tries)

        retrying = AsyncRetrying(
            # One retry, and only when it can still start before the deadline.
            stop=lambda state: state.attempt_number >= 2 or not self._can_retry(end),
            wait=wait_fixed(self._retry_delay),
            retry=retry_if_result(lambda page: page.status == "NETWORK_ERROR")
            | retry_if_exception(_unavailable),
            retry_error_callback=_last_outcome,
        )
        try:
            page: PageRead = await retrying(once)
        except grpc.aio.AioRpcError as err:  # UNAVAILABLE, again or with no time to retry
            raise ReaderUnavailable(err.code().name) from None
        return page

    async def _read_once(self, url: str, start: float, end: float, attempt: int) -> PageRead:
        try:
            async with self._limit:
                # Measured after the wait for a slot, so the reader gets what is really left.
                left = end - time.monotonic()
                if left < _MIN_CALL_S:
                    return PageRead(url, "TIMEOUT", ms=_ms(start), attempts=attempt)
                request = reader_pb2.ReadRequest(url=url, timeout_ms=max(1, int(left * 1000)))
                reply = await self._stub.Read(request, timeout=left, metadata=_run_metadata())
        except grpc.aio.AioRpcError as err:
            code = err.code()
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return PageRead(url, "TIMEOUT", ms=_ms(start), attempts=attempt)
            if code == grpc.StatusCode.UNAVAILABLE:
                raise  # retried by read
            if code in _DOWN_CODES:
                raise ReaderUnavailable(code.name) from None
            logger.info("read failed", extra={"grpc_code": code.name})
            return PageRead(url, "RPC_ERROR", error=code.name, ms=_ms(start))
        return _page(url, reply, _Status.Name(reply.status), _ms(start), attempt)

    def _can_retry(self, end: float) -> bool:
        return end - time.monotonic() > self._retry_delay + _MIN_CALL_S

    async def ping(self, *, timeout: float) -> bool:
        """True when the reader's health service reports SERVING."""
        return await _serving(self._health, timeout)


def _unavailable(err: BaseException) -> bool:
    return isinstance(err, grpc.aio.AioRpcError) and err.code() == grpc.StatusCode.UNAVAILABLE


def _last_outcome(state: RetryCallState) -> PageRead:
    """Out of tries (or time): the last answer as it is, or its error raised."""
    assert state.outcome is not None  # noqa: S101 - tenacity sets it before stopping
    page: PageRead = state.outcome.result()
    return page


def _ms(start: float) -> int:
    return int((time.monotonic() - start) * 1000)


def _page(
    url: str, reply: reader_pb2.ReadResponse, status: str, ms: int, attempts: int
) -> PageRead:
    return PageRead(
        url=url,
        status=status,
        title=reply.title,
        markdown=reply.markdown,
        final_url=reply.final_url,
        cached=reply.cached,
        error=reply.error,
        ms=ms,
        attempts=attempts,
        tier=reply.tier,
        render=_render(reply),
    )


def _render(reply: reader_pb2.ReadResponse) -> dict[str, str | int] | None:
    """The reader's render-tier report for the read event (None: not considered)."""
    if not reply.HasField("render"):
        return None
    info = reply.render
    return {
        "status": info.status,
        "reason": info.reason,
        "ms": info.ms,
        "requests": info.requests,
        "refused": info.refused,
    }


async def _serving(stub: health_pb2_grpc.HealthStub, timeout: float) -> bool:
    try:
        reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
    except grpc.aio.AioRpcError:
        return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
