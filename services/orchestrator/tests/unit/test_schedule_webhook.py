"""Webhook signatures and the address policy (orchestrator/schedules/signing.py, targets.py,
webhook.py): a valid signature verifies and a changed body or secret does not; private and
special-purpose addresses are refused unless allowed; a host resolving to a private address is
refused before any connection; transient failures are retried, a 4xx is not."""

from __future__ import annotations

import ipaddress
import json

import httpx
import pytest
from orchestrator.adapters.webhook import WebhookFailed, WebhookPolicy, WebhookSender
from orchestrator.core.schedules.errors import InvalidSchedule
from orchestrator.core.schedules.signing import HEADER, sign, verify
from orchestrator.core.schedules.targets import IPAddress, parse_webhook_url

SECRET = "s3cret-of-the-schedule"  # noqa: S105 - a test key


def test_signature_verifies_and_binds_body_secret_and_time() -> None:
    body = b'{"a":1}'
    header = sign(SECRET, 1000, body)
    assert header.startswith("t=1000,v1=")
    assert verify(SECRET, header, body, now=1010)
    assert not verify(SECRET, header, b'{"a":2}', now=1010)
    assert not verify("other", header, body, now=1010)
    assert not verify(SECRET, header, body, now=5000)  # too old: a replay
    assert not verify(SECRET, "garbage", body, now=1000)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/hook",
        "http://user:pw@example.com/hook",
        "http://localhost/hook",
        "http://127.0.0.1/hook",
        "http://10.0.0.1/hook",
        "http://[::1]/hook",
        "http://[::ffff:192.168.0.1]/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://0.0.0.0/",
        # IPv6 forms that carry a refused address (quarry_common.addresses, the reader's rules)
        "http://[::a9fe:a9fe]/",  # IPv4-compatible form of 169.254.169.254
        "http://[64:ff9b:1::a00:1]/",  # local-use NAT64 prefix
        "example.com/hook",
        "http://exa mple.com/",
        "http://example.com/a b",  # sent as written, so it must already be a URL
        # numeric hosts inet_aton reads as 127.0.0.1 (quarry_common.urls, the reader's syntax)
        "http://2130706433/",
        "http://0x7f.1/",
    ],
)
def test_refused_webhook_urls(url: str) -> None:
    with pytest.raises(InvalidSchedule):
        parse_webhook_url(url, allow_private=False)


def test_allow_private_opens_loopback_but_never_metadata() -> None:
    assert parse_webhook_url("http://127.0.0.1:9/h", allow_private=True).port == 9
    assert parse_webhook_url("http://localhost:9/h", allow_private=True).host == "localhost"
    with pytest.raises(InvalidSchedule):
        parse_webhook_url("http://169.254.169.254/", allow_private=True)
    with pytest.raises(InvalidSchedule):
        parse_webhook_url("http://[::a9fe:a9fe]/", allow_private=True)


def test_the_url_is_kept_as_written_and_the_host_resolved_in_ascii() -> None:
    target = parse_webhook_url(" https://Bücher.example/hook?x=1 ", allow_private=False)
    assert target.url == "https://Bücher.example/hook?x=1"
    assert (target.host, target.port, target.ip) == ("xn--bcher-kva.example", 443, None)


async def _resolves_private(host: str, port: int) -> list[IPAddress]:
    return [ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("10.1.2.3")]


async def test_a_host_resolving_to_a_private_address_is_never_contacted() -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200)

    sender = WebhookSender(
        WebhookPolicy(), resolver=_resolves_private, transport=httpx.MockTransport(handler)
    )
    with pytest.raises(WebhookFailed, match="private address"):
        await sender.deliver("https://hooks.example.com/x", SECRET, {"a": 1})
    assert calls == []
    await sender.aclose()


async def _public(host: str, port: int) -> list[IPAddress]:
    return [ipaddress.ip_address("93.184.216.34")]


async def _no_sleep(seconds: float) -> None:
    return None


async def test_retries_transient_failures_then_signs_the_body_it_sends() -> None:
    answers = [503, 429, 204]
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(answers[len(seen) - 1])

    sender = WebhookSender(
        WebhookPolicy(attempts=4),
        resolver=_public,
        sleep=_no_sleep,
        transport=httpx.MockTransport(handler),
    )
    attempts = await sender.deliver("https://hooks.example.com/x?k=1", SECRET, {"b": [1, 2]})
    assert attempts == 3
    last = seen[-1]
    # pinned to the checked address, the name kept for Host and SNI
    assert last.url.host == "93.184.216.34"
    assert last.headers["host"] == "hooks.example.com"
    assert last.extensions["sni_hostname"] == "hooks.example.com"
    assert json.loads(last.content) == {"b": [1, 2]}
    stamp = int(last.headers[HEADER].split(",")[0][2:])
    assert verify(SECRET, last.headers[HEADER], last.content, now=stamp)
    await sender.aclose()


@pytest.mark.parametrize("status", [404, 302])
async def test_a_client_error_is_not_retried_and_redirects_are_not_followed(status: int) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, headers={"location": "http://10.0.0.1/"})

    transport = httpx.MockTransport(handler)
    sender = WebhookSender(WebhookPolicy(), resolver=_public, sleep=_no_sleep, transport=transport)
    with pytest.raises(WebhookFailed, match=f"HTTP {status}"):
        await sender.deliver("https://hooks.example.com/x", SECRET, {})
    assert len(seen) == 1
    await sender.aclose()


async def test_every_attempt_failing_ends_in_webhook_failed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    sender = WebhookSender(
        WebhookPolicy(attempts=3),
        resolver=_public,
        sleep=_no_sleep,
        transport=httpx.MockTransport(handler),
    )
    with pytest.raises(WebhookFailed, match="Cannot reach"):
        await sender.deliver("https://hooks.example.com/x", SECRET, {})
    await sender.aclose()
