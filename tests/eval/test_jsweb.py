"""The JS-only question set of `make eval` (bench/eval/jsweb.py): proven, and true to its word
through a real reader with real Chromium: answered with the render tier, lost without it."""

from __future__ import annotations

import asyncio
import ipaddress
import shutil
from collections.abc import Iterator

import grpc
import pytest
from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.server import build_server

from bench.eval import jsweb
from bench.eval.questions import Part, Question
from tests.offline.web import LocalWeb, serve


def test_the_set_is_large_enough_and_proven() -> None:
    qs = jsweb.questions()
    assert len(qs) >= 8
    assert {q.set for q in qs} == {jsweb.SET}
    assert jsweb.check(qs) == []


def test_an_answer_in_the_snippet_or_missing_from_the_page_is_reported() -> None:
    gold = (jsweb.APPS[0].path,)
    shown = Question("s", "deep", "What?", (Part("Kelpie backup scheduler", gold),), jsweb.SET)
    missing = Question("m", "deep", "What?", (Part(r"\b99 days", gold),), jsweb.SET)
    problems = jsweb.check([shown, missing])
    assert any(p.startswith("s:") and "snippet" in p for p in problems)
    assert any(p.startswith("m:") and "rendered text" in p for p in problems)


@pytest.fixture(scope="module")
def web() -> Iterator[LocalWeb]:
    with serve(jsweb.route()) as running:
        yield running


async def _read_all(base_url: str, render: str) -> dict[str, str]:
    settings = Settings(
        port=0,
        workers=1,
        allowed_cidrs=(ipaddress.ip_network("127.0.0.1/32"),),
        cache_enabled=False,
        render=render,
        render_timeout_s=60,
    )
    server = build_server(settings)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = reader_pb2_grpc.ReaderStub(channel)
            texts = {}
            for app in jsweb.APPS:
                request = reader_pb2.ReadRequest(url=base_url + app.path)
                texts[app.path] = (await stub.Read(request, timeout=180)).markdown
            return texts
    finally:
        await server.stop(0)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is missing")
@pytest.mark.timeout(600)
def test_answered_with_the_render_tier_and_lost_without_it(web: LocalWeb) -> None:
    on = asyncio.run(_read_all(web.base_url, "on-demand"))
    off = asyncio.run(_read_all(web.base_url, "off"))
    for q in jsweb.questions():
        (path,) = q.gold
        assert q.answered_by(on[path]), q.id
        assert not q.answered_by(off[path]), q.id
