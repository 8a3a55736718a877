"""The e2e metasearch engine itself: real searx over the fixture web, JSON API like SearXNG."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port
from tests.e2e.searx import run_searx, searx_available
from tests.e2e.web import PAGES, serve_web

pytestmark = pytest.mark.e2e


def test_searx_answers_json_over_the_fixture_pages(tmp_path: Path) -> None:
    reason = searx_available()
    if reason:
        pytest.fail(reason)
    with serve_web() as web, run_searx(tmp_path, web, PAGES, free_port()) as base:
        reply = httpx.get(
            f"{base}/search", params={"q": "who designed the lighthouse?", "format": "json"}
        )
        assert reply.status_code == 200
        body = reply.json()
        urls = [r["url"] for r in body["results"]]
        assert urls, body
        assert all(u.startswith(web.base_url) for u in urls)
        assert web.url(PAGES[0]) in urls[:3]
        assert body["unresponsive_engines"] == []
        # Punctuation-only and operator-laden queries must not break the engine.
        for q in ["?!", 'NOT "AND" (OR)']:
            odd = httpx.get(f"{base}/search", params={"q": q, "format": "json"})
            assert odd.status_code == 200
            assert odd.json()["unresponsive_engines"] == []
