"""The render tier over gRPC, with real Chromium, against a loopback fixture site.

The site is served on 127.0.0.3, the only address the reader may reach; a canary server on
127.0.0.1 must never see a request. No test asserts a time: hostile pages are bounded by the
tier's caps, and each test checks the outcome and that the reader still serves other reads.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import shutil
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.server import ReaderServer, build_server

from services.reader.tests.jspages import FERRY_FACT, TIDE_FACT, js_routes
from services.reader.tests.pages import ARTICLE, PARAGRAPHS, HttpServer, fixed

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is missing"),
]

Status = reader_pb2.ReadResponse.Status
SITE = "127.0.0.3"
# Generous: only the caps under test may end a render, however loaded the box is.
CALL_TIMEOUT_S = 180


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def canary() -> AsyncIterator[HttpServer]:
    server = HttpServer({"/secret": fixed(b"secret")})
    async with server:
        yield server


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site(canary: HttpServer) -> AsyncIterator[HttpServer]:
    server = HttpServer({})
    server.bind = SITE
    async with server:
        private = server.url("/app.js", host="127.0.0.2")  # loopback, but not allowed
        server.routes.update(js_routes(canary.port, private) | {"/article": fixed(ARTICLE)})
        yield server


def _settings(**kw: object) -> Settings:
    base: dict[str, object] = {
        "port": 0,
        "workers": 2,
        "allowed_cidrs": (ipaddress.ip_network(f"{SITE}/32"),),
        "cache_enabled": False,
        "timeout_s": 60,
        "render_timeout_s": 60,
        "render_heap_mb": 64,
    }
    return Settings(**(base | kw))  # type: ignore[arg-type]


async def _serve(settings: Settings) -> AsyncIterator[reader_pb2_grpc.ReaderAsyncStub]:
    server: ReaderServer = build_server(settings)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            yield reader_pb2_grpc.ReaderStub(channel)
    finally:
        await server.stop(0)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def stub() -> AsyncIterator[reader_pb2_grpc.ReaderAsyncStub]:
    async for s in _serve(_settings()):
        yield s


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def tight() -> AsyncIterator[reader_pb2_grpc.ReaderAsyncStub]:
    """A reader whose renders are short and capped: for pages that never finish."""
    async for s in _serve(_settings(render_timeout_s=4, render_max_requests=30)):
        yield s


async def _read(stub: reader_pb2_grpc.ReaderAsyncStub, url: str) -> reader_pb2.ReadResponse:
    reply: reader_pb2.ReadResponse = await stub.Read(
        reader_pb2.ReadRequest(url=url), timeout=CALL_TIMEOUT_S
    )
    return reply


async def test_js_only_page_is_read_through_the_render_tier(
    stub: reader_pb2_grpc.ReaderAsyncStub, site: HttpServer
) -> None:
    reply = await _read(stub, site.url("/app", host=SITE))
    assert reply.status == Status.OK, (reply.error, reply.render)
    assert reply.tier == "render"
    assert TIDE_FACT in reply.markdown
    assert reply.markdown.lstrip().startswith("# Tides at Veldmark")  # structure kept
    assert reply.render.status == "RENDERED"
    assert "thin" in reply.render.reason
    assert "empty_root" in reply.render.reason
    assert reply.render.requests >= 1  # app.js, through the reader's fetcher


async def test_a_page_whose_script_fetches_its_text_is_read_once_the_fetch_lands(
    site: HttpServer,
) -> None:
    # The fetch starts as the document is parsed, and the DOM is written only once its reply
    # is in: a snapshot taken before then is the empty root. A race, so read a few times (with
    # a reader of its own: its domain memory would learn to render the site's plain pages).
    async for stub in _serve(_settings()):
        for _ in range(4):
            reply = await _read(stub, site.url("/spa", host=SITE))
            assert reply.status == Status.OK, (reply.error, reply.render)
            assert reply.tier == "render", reply.markdown
            assert FERRY_FACT in reply.markdown
            assert reply.render.requests == 1  # spa.json, through the reader's fetcher


async def test_plain_page_is_not_rendered(
    stub: reader_pb2_grpc.ReaderAsyncStub, site: HttpServer
) -> None:
    reply = await _read(stub, site.url("/article", host=SITE))
    assert reply.status == Status.OK
    assert reply.tier == "fetch"
    assert reply.render.status == "NOT_NEEDED"
    assert PARAGRAPHS[0][:50] in reply.markdown


async def test_every_forbidden_sub_request_is_refused_and_logged(
    stub: reader_pb2_grpc.ReaderAsyncStub,
    site: HttpServer,
    canary: HttpServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="reader.render"):
        reply = await _read(stub, site.url("/hostile", host=SITE))
    assert reply.status == Status.OK
    assert reply.tier == "render"
    assert canary.requests == []  # 127.0.0.1 never reached
    refusals = [
        (getattr(r, "host", ""), getattr(r, "reason", ""))
        for r in caplog.records
        if r.getMessage() == "render sub-request refused"
    ]
    hosts = {host for host, _ in refusals}
    assert f"127.0.0.1:{canary.port}" in hosts
    assert "10.0.0.7" in hosts
    assert "file:" in hosts
    # The redirect from the allowed site to 127.0.0.2 is refused at its second hop.
    assert any(h == f"{SITE}:{site.port}" and "BLOCKED" in why for h, why in refusals)
    assert reply.render.refused >= 4


async def test_a_page_that_never_stops_loading_is_bounded(
    tight: reader_pb2_grpc.ReaderAsyncStub, site: HttpServer
) -> None:
    slow = asyncio.create_task(_read(tight, site.url("/never", host=SITE)))
    # The reader keeps serving plain reads while the render hangs on its stalled script.
    plain = await _read(tight, site.url("/article", host=SITE))
    assert plain.status == Status.OK
    reply = await slow
    assert reply.render.status in ("TIMEOUT", "RENDERED")
    assert reply.status in (Status.EMPTY, Status.OK)


async def test_a_page_that_allocates_without_bound_is_bounded(
    tight: reader_pb2_grpc.ReaderAsyncStub, site: HttpServer
) -> None:
    reply = await _read(tight, site.url("/hog", host=SITE))
    assert reply.tier == "fetch"  # the plain result (the noscript line) is kept
    assert TIDE_FACT not in reply.markdown
    assert reply.render.status in ("CRASHED", "MEMORY", "TIMEOUT")
    after = await _read(tight, site.url("/app", host=SITE))  # the browser still renders
    assert after.status == Status.OK
    assert after.tier == "render"


async def test_a_page_that_opens_endless_frames_is_bounded(
    tight: reader_pb2_grpc.ReaderAsyncStub, site: HttpServer
) -> None:
    reply = await _read(tight, site.url("/frames", host=SITE))
    assert reply.render.status in ("RENDERED", "TIMEOUT", "CRASHED", "MEMORY")
    assert reply.render.requests <= 30  # the cap
    frames = sum(1 for path, _ in site.requests if path.startswith("/frame?"))
    assert frames <= 30
    after = await _read(tight, site.url("/app", host=SITE))
    assert after.status == Status.OK
    assert after.tier == "render"


async def test_render_off_is_the_old_behaviour(site: HttpServer) -> None:
    async for off in _serve(_settings(render="off")):
        before = len(site.requests)
        reply = await _read(off, site.url("/app", host=SITE))
        assert reply.tier == "fetch"  # the plain result: the noscript line, no article
        assert TIDE_FACT not in reply.markdown
        assert not reply.HasField("render")
        assert [path for path, _ in site.requests[before:]] == ["/app"]  # no script fetched


async def test_domain_memory_records_each_tier_and_is_visible(
    stub: reader_pb2_grpc.ReaderAsyncStub, site: HttpServer
) -> None:
    for _ in range(3):
        await _read(stub, site.url("/app", host=SITE))
    reply = await stub.Domains(reader_pb2.DomainsRequest(limit=5), timeout=10)
    (entry,) = [d for d in reply.domains if d.domain == SITE]
    tiers = {t.tier: t for t in entry.tiers}
    assert tiers["render"].ok >= 3
    assert tiers["render"].mean_chars > 200
    assert tiers["fetch"].attempts >= 3
    # Plain reads of /app yield only the noscript line, which every render replaced: the
    # domain's pages are now rendered without a plain extraction first.
    assert tiers["fetch"].empty >= 3
    assert entry.advice == "render_first"
    again = await _read(stub, site.url("/app", host=SITE))
    assert again.tier == "render"
    assert again.render.reason == "domain: plain reads empty"
    assert again.extract_ms == 0  # no plain extraction
    assert TIDE_FACT in again.markdown
