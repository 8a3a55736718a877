"""Access control and the HTTP server's bounds on a real uvicorn server (127.0.0.1, port 0),
configured as `python -m orchestrator` configures it, over the real reader and ranker."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
from orchestrator.config import Settings

from services.orchestrator.tests.fakes.fake_llm import FakeLLM
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
from services.orchestrator.tests.integration.corpus_support import corpus_world
from services.orchestrator.tests.integration.support import (
    World,
    results_for,
    serve_production,
    stack_settings,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["corpus_world"]  # the fixture, imported so pytest finds it here
VAULT = "The vault combination is 31-41-59."
EVIL = {"Host": "attacker.example"}


@asynccontextmanager
async def served_stack(world: World, **settings: Any) -> AsyncIterator[tuple[str, FakeLLM]]:
    """Scripted LLM and SearXNG plus the production app over ``world``, served by uvicorn."""
    async with AsyncExitStack() as es:
        llm = await es.enter_async_context(FakeLLM())
        searx = await es.enter_async_context(FakeSearxng(results_for(world)))
        config = stack_settings(world, llm, searx, **settings)
        yield await es.enter_async_context(serve_production(config)), llm


def _events(reply: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in reply.text.splitlines() if line.strip()]


async def _ask_local(c: httpx.AsyncClient, question: str) -> list[dict[str, Any]]:
    reply = await c.post(
        "/v1/search",
        json={"query": question, "options": {"sources": ["local"]}},
        headers={"Accept": "application/x-ndjson"},
    )
    assert reply.status_code == 200, reply.text
    return _events(reply)


def _local_urls(events: list[dict[str, Any]]) -> list[str]:
    return [
        src["url"]
        for e in events
        if e["type"] == "sources"
        for src in e["data"]["sources"]
        if src["origin"] == "local"
    ]


async def test_a_rebinding_page_cannot_index_a_planted_folder_or_read_it_back(
    corpus_world: World, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "vault.md").write_text(f"# Vault\n\n{VAULT}\n")
    # make run's configuration: folders outside CORPUS_DIR may be indexed once a client confirms.
    async with (
        served_stack(corpus_world, corpus_allow_outside=True) as (api, llm),
        httpx.AsyncClient(base_url=api, timeout=60) as c,
    ):
        planted = {"path": str(home), "allow_outside": True}
        refused = await c.post("/v1/corpus/refresh", json=planted, headers=EVIL)
        assert refused.status_code == 400
        assert refused.headers["content-type"] == "application/problem+json"
        asked = await c.post("/v1/search", json={"query": "vault combination"}, headers=EVIL)
        assert asked.status_code == 400
        assert llm.calls == []  # refused before any work
        # The legitimate client (right Host) finds nothing of the folder: it was never indexed.
        before = await _ask_local(c, "vault combination")
        assert not any(u.startswith(f"local:{home}") for u in _local_urls(before))
        # ... and the same request with the right Host does index it: the refusal was the Host.
        indexed = await c.post(
            "/v1/corpus/refresh", json=planted, headers={"Accept": "application/json"}
        )
        assert indexed.status_code == 200
        assert indexed.json()["added"] == 1
        after = await _ask_local(c, "vault combination")
        assert f"local:{home}/vault.md" in _local_urls(after)


async def test_non_canonical_paths_index_one_copy(corpus_world: World, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nCanonical forms.\n")
    link = tmp_path / "link"
    link.symlink_to(root)
    async with (
        served_stack(corpus_world, corpus_roots=str(tmp_path)) as (api, _),
        httpx.AsyncClient(base_url=api, timeout=60) as c,
    ):
        roots = []
        for form in (f"/{root}", f"{root}/./", str(link), str(root)):
            reply = await c.post(
                "/v1/corpus/refresh", json={"path": form}, headers={"Accept": "application/json"}
            )
            assert reply.status_code == 200, reply.text
            roots.append(reply.json()["root"])
            assert reply.json()["added"] == (1 if len(roots) == 1 else 0), form
        assert roots == [str(root)] * 4


def _raw(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(data)
    return sock


async def test_a_huge_header_is_refused_early(tmp_path: Path) -> None:
    settings = Settings(port=0, max_header_bytes=64 * 1024)
    async with serve_production(settings) as api:
        port = int(api.rsplit(":", 1)[1])

        def send_huge() -> tuple[int, bytes]:
            sock = _raw(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            sent, chunk, answer = 0, b"a" * 65536, b""
            with sock:
                with suppress(OSError):  # the server closes the connection: the send fails
                    while sent < 64 * 1024 * 1024:
                        sock.sendall(chunk)
                        sent += len(chunk)
                with suppress(OSError):  # its 400 may be lost to the reset
                    answer = sock.recv(200)
            return sent, answer

        sent, answer = await asyncio.to_thread(send_huge)
        assert sent < 16 * 1024 * 1024  # refused long before 64 MiB (kernel buffers aside)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 431")
        async with httpx.AsyncClient(base_url=api) as c:
            assert (await c.get("/healthz")).status_code == 200


async def test_slow_header_connections_are_closed() -> None:
    settings = Settings(port=0, header_timeout_s=1.0, max_client_connections=64)
    async with serve_production(settings) as api:
        port = int(api.rsplit(":", 1)[1])
        readers = []
        for _ in range(40):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            readers.append((reader, writer))

        async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
            # One header line every 0.2 s: each byte arrives, the head never completes.
            answered = asyncio.create_task(reader.read())  # all until the server closes
            for i in range(200):
                with suppress(OSError):
                    writer.write(b"X-%d: y\r\n" % i)
                await asyncio.wait([answered], timeout=0.2)
                if answered.done():
                    return answered.result()
            answered.cancel()
            return b"still open"

        async with asyncio.timeout(30):
            results = await asyncio.gather(*(trickle(r, w) for r, w in readers))
        for _, writer in readers:
            writer.close()
        # every connection was answered 408 and closed by the server
        assert [r.split(b"\r\n", 1)[0] for r in results] == [b"HTTP/1.1 408 Request Timeout"] * 40
        async with httpx.AsyncClient(base_url=api) as c:
            assert (await c.get("/healthz")).status_code == 200


async def _start(env: dict[str, str]) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "orchestrator", env=env, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(60):
        _, err = await proc.communicate()
    return proc.returncode or 0, err.decode()


async def test_a_non_loopback_bind_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORCHESTRATOR_", "OTEL_"))}
    bad = {**env, "ORCHESTRATOR_HOST": "0.0.0.0", "ORCHESTRATOR_PORT": "0"}
    code, err = await _start(bad)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "ORCHESTRATOR_API_TOKENS" in lines[0]
    code, err = await _start({**bad, "ORCHESTRATOR_API_TOKEN_FILE": str(tmp_path / "none")})
    assert code == 2
    assert "ORCHESTRATOR_API_TOKEN_FILE" in err.strip()
