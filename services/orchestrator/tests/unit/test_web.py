"""The web UI's static files: served at / and /ui with a strict Content-Security-Policy."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from orchestrator.app import create_app
from orchestrator.config import Settings


@pytest_asyncio.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    # The static routes need no runtime, so the lifespan (and its clients) is not started.
    app = create_app(Settings())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        yield c


async def test_the_page_is_served_at_the_root_with_a_strict_policy(
    client: httpx.AsyncClient,
) -> None:
    reply = await client.get("/")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/ui/js/main.js">' in reply.text
    csp = reply.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "default-src 'none'" in csp
    assert "unsafe-inline" not in csp
    assert reply.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/ui/app.css", "text/css"),
        ("/ui/js/main.js", "javascript"),
        ("/ui/vendor/purify.min.js", "javascript"),
        ("/ui/icon.svg", "image/svg+xml"),
    ],
)
async def test_static_files_are_served_with_their_type(
    client: httpx.AsyncClient, path: str, kind: str
) -> None:
    reply = await client.get(path)
    assert reply.status_code == 200, path
    assert kind in reply.headers["content-type"]
    assert reply.headers["x-content-type-options"] == "nosniff"


async def test_nothing_outside_the_static_folder_is_served(client: httpx.AsyncClient) -> None:
    for path in ("/ui/../app.py", "/ui/%2e%2e/app.py", "/ui/missing.js"):
        reply = await client.get(path)
        assert reply.status_code == 404, path
    assert (await client.get("/ui/js/../../routes.py")).status_code == 404


async def test_the_api_still_answers_problems_beside_the_ui(client: httpx.AsyncClient) -> None:
    reply = await client.get("/v1/nope")
    assert reply.status_code == 404
    assert reply.headers["content-type"] == "application/problem+json"
