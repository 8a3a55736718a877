"""Read over gRPC against a real reader server and a misbehaving loopback web server."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.server import ReaderServer, build_server

from services.reader.tests.pages import (
    ARTICLE,
    CAFE_TEXT,
    JS_SHELL,
    PARAGRAPHS,
    PDF_LINES,
    HttpServer,
    charset_page,
    cut_short,
    deflated,
    endless,
    fixed,
    gzip_bomb,
    long_article,
    make_pdf,
    nested_page,
    status,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

Status = reader_pb2.ReadResponse.Status
UA = "QuarryTest/1.0"


def _routes(web: HttpServer) -> None:
    chain = {f"/hop{i}": status(302, "Found", f"/hop{i - 1}") for i in range(1, 4)}
    web.routes.update(
        chain
        | {
            "/article": fixed(ARTICLE),
            "/hop0": status(301, "Moved", web.url("/article")),
            "/loop": status(302, "Found", "/loop"),
            # 127.0.0.2 is loopback too, but only 127.0.0.1/32 is allowed in these tests.
            "/to-private": status(302, "Found", web.url("/article", host="127.0.0.2")),
            "/to-metadata": status(307, "Temporary", "http://169.254.169.254/latest/meta-data/"),
            "/to-file": status(302, "Found", "file:///etc/passwd"),
            "/endless": endless(b"<p>" + PARAGRAPHS[0].encode() + b"</p>\n" * 64),
            "/drip": endless(b"<p>x</p>", delay=0.2),
            "/stall": cut_short(long_article(), stall=True),
            "/dropped": cut_short(long_article(), stall=False),
            "/dropped-early": cut_short(ARTICLE[:2000], stall=False),
            "/bomb": fixed(gzip_bomb(), **{"Content-Encoding": "gzip"}),
            "/deflate": fixed(deflated(ARTICLE), **{"Content-Encoding": "deflate"}),
            "/404": status(404, "Not Found"),
            "/500": status(500, "Internal Server Error"),
            "/binary": fixed(b"\x89PNG\r\n\x1a\n" + b"\x00" * 500_000, "application/octet-stream"),
            "/png-as-html": fixed(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 100),
            "/utf8-labelled-latin1": fixed(
                charset_page(CAFE_TEXT).encode("utf-8"), "text/html; charset=iso-8859-1"
            ),
            "/cp1252-labelled-utf8": fixed(
                charset_page(CAFE_TEXT).encode("cp1252"), "text/html; charset=utf-8"
            ),
            "/js-shell": fixed(JS_SHELL),
            "/pdf": fixed(make_pdf(PDF_LINES), "application/pdf"),
            "/nested": fixed(nested_page()),
            "/plain": fixed(b"just some plain text notes\n", "text/plain"),
            "/untyped": fixed(ARTICLE, None),
        }
    )


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def web() -> AsyncIterator[HttpServer]:
    async with HttpServer({}) as server:
        _routes(server)
        yield server


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server() -> AsyncIterator[ReaderServer]:
    settings = Settings(
        port=0,
        workers=2,
        allowed_cidrs=(ipaddress.ip_network("127.0.0.1/32"),),
        user_agent=UA,
        cache_enabled=False,
    )
    srv = build_server(settings)
    await srv.start()
    yield srv
    await srv.stop(0)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def stub(server: ReaderServer) -> AsyncIterator[reader_pb2_grpc.ReaderAsyncStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield reader_pb2_grpc.ReaderStub(channel)


async def _read(
    stub: reader_pb2_grpc.ReaderAsyncStub, url: str, **kw: int
) -> reader_pb2.ReadResponse:
    reply: reader_pb2.ReadResponse = await stub.Read(
        reader_pb2.ReadRequest(url=url, **kw), timeout=20
    )
    return reply


async def test_article_is_extracted_with_metadata(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/article"))
    assert reply.status == Status.OK, reply.error
    assert reply.title.startswith("The Veldmark breakwater")
    assert PARAGRAPHS[1][:60] in reply.markdown
    assert "| 1893 | Rebuilt |" in reply.markdown  # tables kept as markdown
    assert "About us" not in reply.markdown
    assert "All rights reserved" not in reply.markdown
    assert reply.language == "en"
    assert reply.site_name == "Coastal History"
    assert reply.published == "2021-03-04"
    assert reply.http_status == 200
    assert reply.fetched_bytes == len(ARTICLE)
    assert reply.content_type.startswith("text/html")
    assert not reply.truncated
    assert web.requests[-1][1]["user-agent"] == UA


async def test_redirect_chain_is_followed(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/hop3"))
    assert reply.status == Status.OK, reply.error
    assert reply.url == web.url("/hop3")
    assert reply.final_url == web.url("/article")


async def test_redirect_loop_stops(stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer) -> None:
    before = sum(1 for path, _ in web.requests if path == "/loop")
    reply = await _read(stub, web.url("/loop"))
    assert reply.status == Status.HTTP_ERROR
    assert "redirects" in reply.error
    assert sum(1 for path, _ in web.requests if path == "/loop") - before == 6  # 1 + 5 redirects


@pytest.mark.parametrize("path", ["/to-private", "/to-metadata", "/to-file"])
async def test_redirect_off_policy_is_blocked(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer, path: str
) -> None:
    reply = await _read(stub, web.url(path))
    assert reply.status == Status.BLOCKED, reply.error
    assert not reply.markdown


async def test_private_address_blocked_when_not_allowed(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/article", host="127.0.0.2"))
    assert reply.status == Status.BLOCKED
    assert reply.error == "private address"


async def test_endless_body_is_cut_at_the_cap(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/endless"), max_bytes=100_000)
    assert reply.status == Status.OK, reply.error
    assert reply.truncated
    assert reply.fetched_bytes == 100_000
    assert PARAGRAPHS[0][:40] in reply.markdown


async def test_gzip_bomb_counts_decoded_bytes(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/bomb"), max_bytes=200_000)
    assert reply.truncated
    assert reply.fetched_bytes == 200_000
    assert reply.status in (Status.OK, Status.EMPTY)


async def test_deflate_body_is_decoded(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/deflate"))
    assert reply.status == Status.OK, reply.error
    assert PARAGRAPHS[2][:50] in reply.markdown


async def test_slow_drip_hits_the_timeout(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/drip"), timeout_ms=800)
    assert reply.status == Status.TIMEOUT


# The reader stops reading a stalled body min(1.5 s, a quarter of the budget) before its end, to
# extract what arrived: with 1.5 s that left 0.375 s to extract 30 KB, too little on a busy box.
@pytest.mark.parametrize(("path", "timeout_ms"), [("/stall", 6000), ("/dropped", 6000)])
async def test_page_cut_short_is_extracted_as_truncated(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer, path: str, timeout_ms: int
) -> None:
    reply = await _read(stub, web.url(path), timeout_ms=timeout_ms)
    assert reply.status == Status.OK, reply.error
    assert reply.truncated
    assert reply.fetched_bytes == len(long_article())
    assert PARAGRAPHS[1][:40] in reply.markdown


async def test_connection_dropped_early_is_a_network_error(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/dropped-early"))
    assert reply.status == Status.NETWORK_ERROR
    assert reply.error == "connection lost mid-body"


async def test_grpc_deadline_bounds_the_read(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    # No timeout_ms: the caller's 1 s gRPC deadline is the only bound short of the 8 s default.
    reply = await stub.Read(reader_pb2.ReadRequest(url=web.url("/drip")), timeout=1.0)
    assert reply.status == Status.TIMEOUT


@pytest.mark.parametrize(("path", "code"), [("/404", 404), ("/500", 500)])
async def test_http_errors_carry_the_code(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer, path: str, code: int
) -> None:
    reply = await _read(stub, web.url(path))
    assert reply.status == Status.HTTP_ERROR
    assert reply.http_status == code
    assert str(code) in reply.error


async def test_binary_is_unsupported_without_download(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/binary"))
    assert reply.status == Status.UNSUPPORTED
    assert reply.fetched_bytes == 0
    assert "application/octet-stream" in reply.error


async def test_binary_labelled_html_is_unsupported(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/png-as-html"))
    assert reply.status == Status.UNSUPPORTED


@pytest.mark.parametrize("path", ["/utf8-labelled-latin1", "/cp1252-labelled-utf8"])
async def test_wrong_charset_label_is_recovered(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer, path: str
) -> None:
    reply = await _read(stub, web.url(path))
    assert reply.status == Status.OK, reply.error
    assert "café de la gare" in reply.markdown
    assert "crème brûlée" in reply.markdown


async def test_js_shell_is_empty(stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer) -> None:
    reply = await _read(stub, web.url("/js-shell"))
    assert reply.status == Status.EMPTY
    assert reply.http_status == 200


async def test_pdf_is_extracted(stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer) -> None:
    reply = await _read(stub, web.url("/pdf"))
    assert reply.status == Status.OK, reply.error
    assert reply.title == "Test PDF"
    assert all(line in reply.markdown for line in PDF_LINES)


async def test_deeply_nested_dom_answers(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/nested"))
    assert reply.status in (Status.OK, Status.EMPTY)
    after = await _read(stub, web.url("/article"))
    assert after.status == Status.OK


async def test_plain_text_passes_through(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/plain"))
    assert reply.status == Status.OK
    assert reply.markdown == "just some plain text notes"


async def test_missing_content_type_is_sniffed(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    reply = await _read(stub, web.url("/untyped"))
    assert reply.status == Status.OK, reply.error
    assert PARAGRAPHS[3][:40] in reply.markdown


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ftp://127.0.0.1/", Status.BLOCKED),
        ("http://user:pw@127.0.0.1/", Status.BLOCKED),
        ("http://2130706433/", Status.BLOCKED),
        ("http://[::ffff:127.0.0.2]/", Status.BLOCKED),
        ("http://169.254.169.254/latest/meta-data/", Status.BLOCKED),
        ("not a url", Status.INVALID_URL),
        ("http://example.com/" + "a" * 2100, Status.INVALID_URL),
    ],
)
async def test_bad_urls_are_statuses(
    stub: reader_pb2_grpc.ReaderAsyncStub, url: str, expected: int
) -> None:
    reply = await _read(stub, url)
    assert reply.status == expected
    assert reply.url == url
    assert reply.error


@pytest.mark.parametrize(
    "request_",
    [
        reader_pb2.ReadRequest(url=""),
        reader_pb2.ReadRequest(url="http://127.0.0.1/", timeout_ms=0),
        reader_pb2.ReadRequest(url="http://127.0.0.1/", max_bytes=0),
        reader_pb2.ReadRequest(url="x" * 20_000),
    ],
)
async def test_malformed_requests_are_invalid_argument(
    stub: reader_pb2_grpc.ReaderAsyncStub, request_: reader_pb2.ReadRequest
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.Read(request_, timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_logs_never_carry_page_text_or_paths(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reply = await _read(stub, web.url("/article?q=private+question"))
    assert reply.status == Status.HTTP_ERROR  # unknown path on the test server
    reply = await _read(stub, web.url("/article"))
    assert reply.status == Status.OK
    logged = "\n".join(f"{r.getMessage()} {vars(r)}" for r in caplog.records)
    assert sum(r.name == "reader.service" and r.getMessage() == "read" for r in caplog.records) == 2
    assert PARAGRAPHS[0][:30] not in logged
    assert "private+question" not in logged


async def test_concurrent_reads_all_answer(
    stub: reader_pb2_grpc.ReaderAsyncStub, web: HttpServer
) -> None:
    # More reads in flight than workers: extraction queues, nothing is dropped or mixed up.
    paths = ["/article", "/hop2", "/pdf", "/plain", "/404", "/js-shell"] * 4
    replies = await asyncio.gather(*(_read(stub, web.url(p)) for p in paths))
    expected = {
        "/article": Status.OK,
        "/hop2": Status.OK,
        "/pdf": Status.OK,
        "/plain": Status.OK,
        "/404": Status.HTTP_ERROR,
        "/js-shell": Status.EMPTY,
    }
    assert [r.status for r in replies] == [expected[p] for p in paths]
    assert all(r.url == web.url(p) for r, p in zip(replies, paths, strict=True))
