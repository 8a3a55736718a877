"""SearxngClient against the fake SearXNG over real HTTP."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import httpx
import pytest
from orchestrator.adapters.search.searxng import SearxngClient, SearxngError, parse_response

from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result

RESULTS = [
    searx_result("https://a.test/page", "A  title", "About\n a.", engines=["brave", "ddg"]),
    searx_result("https://A.test/page/#frag", "A again", "dup"),
    searx_result("ftp://files.test/x", "not the web", ""),
    searx_result("https://b.test/", "B", "About b.", published="2026-01-02T00:00:00", score=0.5),
]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


def client(url: str, http: httpx.AsyncClient, timeout: float = 5.0) -> SearxngClient:
    return SearxngClient(url, http, timeout, retry_backoff_s=0.01)


async def test_parses_searxng_json_in_order_without_duplicates(http: httpx.AsyncClient) -> None:
    async with FakeSearxng(RESULTS) as sx:
        sx.unresponsive = [("brave", "timeout"), ("google", "CAPTCHA")]
        resp = await client(sx.url + "/", http).search(
            "what is a", categories="news", language="en", time_range="month"
        )
    assert [(h.url, h.engine_rank) for h in resp.hits] == [
        ("https://a.test/page", 1),
        ("https://b.test/", 2),
    ]
    first, second = resp.hits
    assert (first.title, first.snippet, first.engines) == ("A title", "About a.", ("brave", "ddg"))
    assert (second.published, second.score) == ("2026-01-02T00:00:00", 0.5)
    assert resp.unresponsive_engines == ["brave", "google"]
    assert resp.unresponsive_reasons == [("brave", "timeout"), ("google", "CAPTCHA")]
    assert sx.searches[0].query == {
        "q": "what is a",
        "format": "json",
        "pageno": "1",
        "categories": "news",
        "language": "en",
        "time_range": "month",
    }


def test_parse_tolerates_old_and_odd_shapes() -> None:
    resp = parse_response(
        {
            "results": [None, {"url": 3}, {"url": "http://x.test", "engine": "bing"}],
            "unresponsive_engines": ["wikipedia"],
            "suggestions": ["x y", 4],
        }
    )
    assert [(h.url, h.engines, h.title) for h in resp.hits] == [("http://x.test", ("bing",), "")]
    assert resp.unresponsive_engines == ["wikipedia"]
    assert resp.suggestions == ["x y"]


async def test_403_says_json_output_is_disabled(http: httpx.AsyncClient) -> None:
    async with FakeSearxng(mode="403") as sx:
        with pytest.raises(SearxngError) as err:
            await client(sx.url, http).search("q")
    message = str(err.value)
    assert "JSON output is disabled" in message
    # the exact settings.yml lines to add
    assert "search:\n  formats:\n    - html\n    - json" in message
    assert "settings.yml" in message
    assert sx.url in message
    assert len(sx.searches) == 1  # no retry on 4xx


async def test_retries_after_network_errors_then_names_the_url(
    http: httpx.AsyncClient,
) -> None:
    async with FakeSearxng(RESULTS) as sx:
        sx.fail_next("drop", "drop")
        resp = await client(sx.url, http).search("q")
        assert len(resp.hits) == 2  # the third attempt answered
        sx.fail_next("drop", "drop", "drop")
        with pytest.raises(SearxngError, match="Cannot reach SearXNG at"):
            await client(sx.url, http).search("q")
    assert len(sx.searches) == 6  # 3 + 3: two retries each


async def test_retry_after_5xx_then_error_names_the_url(http: httpx.AsyncClient) -> None:
    async with FakeSearxng(RESULTS) as sx:
        sx.fail_next("500")
        assert len((await client(sx.url, http).search("q")).hits) == 2
        sx.mode = "500"
        with pytest.raises(SearxngError, match="answered HTTP 500") as err:
            await client(sx.url, http).search("q")
    assert sx.url in str(err.value)
    assert len(sx.searches) == 5  # 2 + 3


async def test_backoff_grows_exponentially_with_jitter(http: httpx.AsyncClient) -> None:
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    async with FakeSearxng(RESULTS) as sx:
        sx.fail_next("500", "drop", "500")
        searx = SearxngClient(sx.url, http, 5.0, retry_backoff_s=0.1, retries=3, sleep=sleep)
        assert len((await searx.search("q")).hits) == 2
    # 0.1 * 2**n, plus up to 0.1 of random jitter each time
    assert len(pauses) == 3
    for n, pause in enumerate(pauses):
        assert 0.1 * 2**n <= pause <= 0.1 * 2**n + 0.1, pauses


async def test_retries_stop_at_the_calls_deadline(http: httpx.AsyncClient) -> None:
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    async with FakeSearxng(RESULTS, mode="500") as sx:
        # a first pause of 2 s cannot fit in a 0.5 s call: no retry is even tried
        searx = SearxngClient(sx.url, http, 0.5, retry_backoff_s=2.0, retries=5, sleep=sleep)
        with pytest.raises(SearxngError, match="answered HTTP 500"):
            await searx.search("q")
    assert len(sx.searches) == 1
    assert pauses == []


async def test_engines_and_page_reach_searxng(http: httpx.AsyncClient) -> None:
    async with FakeSearxng(RESULTS) as sx:
        await client(sx.url, http).search("q", engines=["wikipedia", "arch linux wiki"], pageno=3)
    assert sx.searches[0].query["engines"] == "wikipedia,arch linux wiki"
    assert sx.searches[0].query["pageno"] == "3"


async def test_timeout_is_an_error_without_retry(http: httpx.AsyncClient) -> None:
    async with FakeSearxng(mode="hang") as sx:
        with pytest.raises(SearxngError, match=r"did not answer within 0\.2 s"):
            await client(sx.url, http, timeout=0.2).search("q")
    assert len(sx.searches) == 1


async def test_connection_refused_and_ping(http: httpx.AsyncClient) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = client(f"http://127.0.0.1:{port}", http)
    with pytest.raises(SearxngError, match="connection refused") as err:
        await down.search("q")
    assert err.value.url == f"http://127.0.0.1:{port}"
    assert await down.ping(timeout=1) is False
    async with FakeSearxng() as sx:
        up = client(sx.url, http)
        assert await up.ping(timeout=1) is True
        sx.healthy = False
        assert await up.ping(timeout=1) is False
    with pytest.raises(SearxngError, match="SEARXNG_URL"):
        await client("", http).search("q")
