"""The stack the browser tests talk to, on 127.0.0.1: a fixture page server (with one hostile
page), real reader and ranker gRPC servers, the scripted LLM and fake SearXNG (real wire
formats), and the orchestrator under a real uvicorn, all on one asyncio loop in a background
thread so the tests can drive Chromium with Playwright's synchronous API."""

from __future__ import annotations

import asyncio
import importlib
import shutil
import socket
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import uvicorn
from orchestrator.app import create_app
from orchestrator.config import Settings

from services.orchestrator.tests.fakes._http import Request, Response, TinyHTTPServer
from services.orchestrator.tests.fakes.fake_llm import FakeLLM
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng, searx_result
from services.orchestrator.tests.fakes.llm_script import Script
from services.orchestrator.tests.integration.support import results_for, serve_world

T = TypeVar("T")

# Text a hostile page carries: markup that must stay text wherever the UI shows it.
HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1">Hostile'
HOSTILE_TEXT = (
    "<script>window.__pwned=2</script> Tides are also explained by this page, which tries "
    '<img src=x onerror="window.__pwned=3"> to run code in your browser.'
)


def hostile_html() -> bytes:
    """A page whose visible text (escaped in the HTML) contains script and img markup."""
    from html import escape

    para = escape(HOSTILE_TEXT)
    body = "".join(f"<p>{para} Paragraph {i}.</p>" for i in range(5))
    return (
        f"<html><head><title>{escape(HOSTILE_TITLE)}</title></head><body><article>"
        f"<h1>{escape(HOSTILE_TITLE)}</h1>{body}</article></body></html>"
    ).encode()


async def _serve_hostile(request: Request) -> Response:
    return Response(200, hostile_html(), "text/html; charset=utf-8")


@dataclass
class UiWorld:
    """What a test needs: the UI's base URL and handles on the scripted servers."""

    base_url: str
    llm: FakeLLM
    searx: FakeSearxng
    loop: asyncio.AbstractEventLoop
    # The same stack behind an orchestrator that needs TOKEN (None: no token support here).
    token_url: str | None = None
    # Where the first orchestrator keeps uploaded documents (tests/ui/test_documents.py).
    upload_dir: str = ""

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the servers' loop (the fakes are not thread-safe) and return its value."""

        async def run() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    def wait(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        """Block until ``predicate`` (evaluated on the loop) is true."""

        async def run() -> None:
            async with asyncio.timeout(timeout):
                while not predicate():  # noqa: ASYNC110 - the fakes' counters have no event
                    await asyncio.sleep(0.02)

        asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout + 1)


def research_script() -> Script | None:
    """The research calls' scripted answers (scope, compress, evaluate) once that API exists."""
    try:
        module = importlib.import_module("services.orchestrator.tests.integration.research_support")
    except ImportError:  # branch research not merged yet: quick search needs no script
        return None
    script: Script = module.research_reply
    return script


# The second orchestrator, the one that needs a bearer token, accepts this one.
TOKEN = "ui-test-token-0123456789"  # noqa: S105 - a test token


def optional_settings() -> dict[str, Any]:
    """Settings of features this orchestrator may have: a quick research plan review, and no
    per-client rate limit (every test's browser is the same 127.0.0.1 client)."""
    fields = Settings.model_fields
    wanted = {
        "research_review_delay_s": 0.2,
        "research_heartbeat_s": 1.0,
        "rate_questions": "off",
        "rate_research": "off",
    }
    return {k: v for k, v in wanted.items() if k in fields}


def has_tokens() -> bool:
    """Whether this orchestrator has bearer tokens (branch sec)."""
    return "api_tokens" in Settings.model_fields


async def _serve(es: AsyncExitStack, app: Any) -> str:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port until the stack closes; its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))

    async def stop() -> None:
        server.should_exit = True
        await task
        sock.close()

    es.push_async_callback(stop)
    async with asyncio.timeout(30):
        while not server.started:  # noqa: ASYNC110 - uvicorn offers only this flag
            await asyncio.sleep(0.02)
    return f"http://127.0.0.1:{port}"


async def _start(es: AsyncExitStack) -> UiWorld:
    world = await es.enter_async_context(serve_world())
    hostile = TinyHTTPServer(_serve_hostile)
    await hostile.start()
    es.push_async_callback(hostile.stop)
    plain = results_for(world)

    def results(query: str) -> list[dict[str, Any]]:
        if "hostile" in query.lower():
            return [searx_result(f"{hostile.url}/hostile", HOSTILE_TITLE, HOSTILE_TEXT)]
        return plain(query)

    # Tokens arrive 40 ms apart, so a test can watch an answer grow and press Stop mid-answer.
    llm = await es.enter_async_context(FakeLLM(token_delay=0.04, script=research_script()))
    searx = await es.enter_async_context(FakeSearxng(results))
    config: dict[str, Any] = {
        "reader_addr": world.reader_addr,
        "ranker_addr": world.ranker_addr,
        "searxng_url": searx.url,
        "llm_provider": "ollama",
        "llm_base_url": llm.url,
        "llm_model": llm.model,
        "read_retry_delay_s": 0.05,
        "synthesis_reserve_s": 1.0,
        **optional_settings(),
    }
    # The real index, and an upload folder for the documents panel; the web stays the default
    # source (uploads would otherwise add "local"), so the other tests' answers are unchanged.
    upload_dir = tempfile.mkdtemp(prefix="quarry-ui-uploads-")
    es.callback(shutil.rmtree, upload_dir, ignore_errors=True)
    documents: dict[str, Any] = {
        "index_addr": world.index_addr,
        "upload_dir": upload_dir,
        "sources": "web",
    }
    base_url = await _serve(es, create_app(Settings(**config, **documents)))
    token_url = None
    if has_tokens():
        token_url = await _serve(es, create_app(Settings(**config, api_tokens=TOKEN)))
    loop = asyncio.get_running_loop()
    return UiWorld(base_url, llm, searx, loop, token_url, upload_dir)


@contextmanager
def running_world() -> Iterator[UiWorld]:
    """Start the stack on a background loop; stop it (and the loop) when the block ends."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="ui-world", daemon=True)
    thread.start()
    es = AsyncExitStack()

    def run(coro: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrapped(), loop).result(60)

    try:
        yield run(_start(es))
    finally:
        try:
            run(es.aclose())
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()
