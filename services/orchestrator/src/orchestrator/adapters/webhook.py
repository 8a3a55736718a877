"""Sending a schedule's notification: one signed JSON POST, retried, to a checked address.

The host is resolved here and every address it resolves to is checked (targets.refusal); the
request then goes to the first address itself (the Host header and TLS SNI keep the name), so a
DNS answer that changes between the check and the connection (rebinding) cannot steer it to a
private address. Redirects are not followed. Transport errors, 429 and 5xx are retried with
exponential back-off and jitter (tenacity); any other answer ends the delivery. Only the host is
ever logged: a webhook URL's path often is a credential itself, and the secret never is.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from orchestrator.core.schedules.errors import InvalidSchedule, NotifyFailed
from orchestrator.core.schedules.signing import DELIVERY_HEADER, EVENT_HEADER, HEADER, sign
from orchestrator.core.schedules.targets import IPAddress, WebhookURL, parse_webhook_url, refusal

logger = logging.getLogger(__name__)
EVENT = "schedule.run.completed"
MAX_BACKOFF_S = 60.0


class WebhookFailed(NotifyFailed):
    """The delivery did not succeed; the message is safe to store and show its owner."""


class _Transient(WebhookFailed):
    """Worth another attempt: a network error, 429 or a 5xx."""


@dataclass(frozen=True)
class WebhookPolicy:
    """How deliveries are made (operator settings)."""

    allow_private: bool = False
    timeout_s: float = 10.0
    attempts: int = 4
    backoff_s: float = 1.0


Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
Sleep = Callable[[float], Awaitable[None]]


async def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (the system resolver, off the event loop)."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


class WebhookSender:
    """Delivers notifications; one per app, sharing one HTTP client."""

    def __init__(
        self,
        policy: WebhookPolicy,
        *,
        resolver: Resolver = resolve,
        sleep: Sleep = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._policy = policy
        self._resolve = resolver
        self._sleep = sleep
        self._http = httpx.AsyncClient(follow_redirects=False, trust_env=False, transport=transport)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._http.aclose()

    def check(self, url: str) -> WebhookURL:
        """Validate a webhook URL as the API receives it (raises InvalidSchedule)."""
        return parse_webhook_url(url, allow_private=self._policy.allow_private)

    async def deliver(self, url: str, secret: str, payload: dict[str, Any]) -> int:
        """POST ``payload`` signed with ``secret``; the attempts it took.

        Raises:
            WebhookFailed: refused by the address policy, or every attempt failed.
        """
        body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        delivery = uuid.uuid4().hex
        retrying = AsyncRetrying(
            stop=stop_after_attempt(max(self._policy.attempts, 1)),
            wait=wait_exponential_jitter(
                multiplier=self._policy.backoff_s, max=MAX_BACKOFF_S, jitter=self._policy.backoff_s
            ),
            retry=retry_if_exception_type(_Transient),
            before_sleep=_log_retry,
            sleep=self._sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                await self._attempt(url, secret, body, delivery)
                return attempt.retry_state.attempt_number
        raise AssertionError("unreachable")  # pragma: no cover - reraise=True raises

    async def _pinned(self, url: str) -> tuple[httpx.URL, str, IPAddress]:
        try:
            target = self.check(url)
        except InvalidSchedule as exc:
            raise WebhookFailed(exc.detail) from None
        try:
            original = httpx.URL(url)
        except httpx.InvalidURL:
            raise WebhookFailed("The webhook URL is malformed.") from None
        if target.ip is not None:
            return original, target.host, target.ip
        try:
            found = await self._resolve(target.host, target.port)
        except OSError as exc:
            raise _Transient(f"Cannot resolve the webhook host {target.host!r} ({exc}).") from None
        for ip in found:
            why = refusal(ip, allow_private=self._policy.allow_private)
            if why:
                raise WebhookFailed(f"The webhook host {target.host!r} resolves to {why}.")
        if not found:
            raise _Transient(f"The webhook host {target.host!r} resolves to no address.")
        ip = found[0]
        return original.copy_with(host=str(ip)), target.host, ip

    async def _attempt(self, url: str, secret: str, body: bytes, delivery: str) -> None:
        pinned, host, _ = await self._pinned(url)
        original = httpx.URL(url)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "Quarry-Webhook/1",
            HEADER: sign(secret, int(time.time()), body),
            EVENT_HEADER: EVENT,
            DELIVERY_HEADER: delivery,
            "Host": original.netloc.decode("ascii"),
        }
        try:
            async with asyncio.timeout(self._policy.timeout_s):
                resp = await self._http.post(
                    pinned,
                    content=body,
                    headers=headers,
                    extensions={"sni_hostname": host},
                    timeout=self._policy.timeout_s,
                )
        except (TimeoutError, httpx.TimeoutException):
            raise _Transient(f"The webhook at {host} did not answer in time.") from None
        except httpx.TransportError as exc:
            raise _Transient(
                f"Cannot reach the webhook at {host} ({type(exc).__name__})."
            ) from None
        if resp.status_code == 429 or resp.status_code >= 500:
            raise _Transient(f"The webhook at {host} answered HTTP {resp.status_code}.")
        if resp.status_code >= 300:
            raise WebhookFailed(f"The webhook at {host} answered HTTP {resp.status_code}.")


def _log_retry(state: RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome is not None else None
    wait = state.next_action.sleep if state.next_action is not None else 0.0
    logger.warning(
        "webhook attempt %d failed; retrying in %.2f s",
        state.attempt_number,
        wait,
        extra={"error": str(error)},
    )
