"""The source policy in a real browser (Chromium through Playwright) against the real
orchestrator over a fixture web of several ``*.test`` domains (read by the real reader): the
"Sites" control's deny list and ``site:`` typed in the question box. A denied domain is never
fetched (the page server counts requests per host), never shown as a source, and the policy's
drop is shown in the turn; an allow list shows only allowed sources; a bad domain is a clear
error in the turn."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Awaitable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest
from orchestrator.app import create_app
from orchestrator.config import Settings
from playwright.sync_api import Browser, BrowserContext, Page, expect

from services.orchestrator.tests.fakes.fake_llm import FakeLLM
from services.orchestrator.tests.fakes.fake_searxng import FakeSearxng
from services.orchestrator.tests.integration.domains_support import (
    DENIED,
    DomainWeb,
    serve_domain_web,
)
from services.orchestrator.tests.integration.support import judge
from tests.ui.conftest import shot
from tests.ui.world import _serve, optional_settings

T = TypeVar("T")


@dataclass
class DomainUi:
    """The UI's base URL over the multi-domain web, and its scripted servers."""

    base_url: str
    web: DomainWeb
    llm: FakeLLM
    searx: FakeSearxng
    loop: asyncio.AbstractEventLoop

    def run(self, coro: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrapped(), self.loop).result(60)

    def read_pages_next(self) -> None:
        """The next question's judges: snippets insufficient (read the pages), then enough."""

        async def queue() -> None:
            self.llm.queue("judge", judge("insufficient"), judge("sufficient"))

        self.run(queue())

    def hits(self) -> list[str]:
        """The hosts the page server was asked for, in order."""

        async def hosts() -> list[str]:
            return [h for h, _ in self.web.hits]

        return self.run(hosts())


async def _start(es: AsyncExitStack, loop: asyncio.AbstractEventLoop) -> DomainUi:
    web = await es.enter_async_context(serve_domain_web())
    llm = await es.enter_async_context(FakeLLM())
    searx = await es.enter_async_context(FakeSearxng(web.results))
    config: dict[str, Any] = {
        "reader_addr": web.world.reader_addr,
        "ranker_addr": web.world.ranker_addr,
        "searxng_url": searx.url,
        "llm_provider": "ollama",
        "llm_base_url": llm.url,
        "llm_model": llm.model,
        "read_retry_delay_s": 0.05,
        "synthesis_reserve_s": 1.0,
        **optional_settings(),
    }
    base_url = await _serve(es, create_app(Settings(**config)))
    return DomainUi(base_url, web, llm, searx, loop)


@pytest.fixture(scope="module")
def domain_ui() -> Iterator[DomainUi]:
    """The stack on its own background loop (as tests/ui/world.py runs the shared one)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="ui-domains", daemon=True)
    thread.start()
    es = AsyncExitStack()

    def run(coro: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrapped(), loop).result(60)

    try:
        yield run(_start(es, loop))
    finally:
        try:
            run(es.aclose())
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()


@pytest.fixture
def ui_page(browser: Browser, domain_ui: DomainUi) -> Iterator[Page]:
    context: BrowserContext = browser.new_context(
        base_url=domain_ui.base_url, viewport={"width": 1280, "height": 800}
    )
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def ask(page: Page, question: str) -> None:
    page.get_by_role("combobox", name="Question").fill(question)
    page.keyboard.press("Enter")


def source_hosts(page: Page) -> set[str]:
    hrefs: list[str] = (
        page.locator(".turn").last.locator(".source a").evaluate_all("els => els.map(e => e.href)")
    )
    return {urlsplit(h).hostname or "" for h in hrefs}


def test_sites_control_deny_list(ui_page: Page, domain_ui: DomainUi) -> None:
    before = len(domain_ui.hits())
    ui_page.goto("/")
    ui_page.locator("#domains > summary").click()
    deny = ui_page.get_by_label("Never these sites")
    deny.fill("evil.test")
    deny.press("Enter")  # stays in the field: the question is not asked
    expect(ui_page.locator(".turn")).to_have_count(0)
    expect(ui_page.locator("#domains > summary")).to_have_text("Sites (1)")
    domain_ui.read_pages_next()
    ask(ui_page, "what causes tides")
    turn = ui_page.locator(".turn").last
    expect(turn.locator(".status")).to_have_text(re.compile(r"^Answered in"))
    expect(turn.locator(".warnings")).to_contain_text(
        "The source policy dropped 2 result(s) from ads.evil.test, evil.test."
    )
    shot(ui_page, "domains-deny")
    assert source_hosts(ui_page) == {"docs.good.test", "other.test"}
    fetched = domain_ui.hits()[before:]
    assert "docs.good.test" in fetched
    assert not set(fetched) & set(DENIED)
    # the list is kept in this browser, and the stored turn keeps what was dropped
    ui_page.reload()
    expect(ui_page.locator("#domains > summary")).to_have_text("Sites (1)")
    restored = ui_page.locator(".turn").last
    expect(restored.locator(".warnings")).to_contain_text("The source policy dropped 2 result(s)")
    assert ui_page.get_by_label("Never these sites").input_value() == "evil.test"


def test_site_operators_in_the_question_box(ui_page: Page, domain_ui: DomainUi) -> None:
    before = len(domain_ui.hits())
    ui_page.goto("/")
    expect(ui_page.locator("#domains > summary")).to_have_text("Sites")  # a fresh browser
    domain_ui.read_pages_next()
    ask(ui_page, "what causes tides site:good.test")
    turn = ui_page.locator(".turn").last
    expect(turn.locator(".status")).to_have_text(re.compile(r"^Answered in"))
    expect(turn.locator(".question")).to_contain_text("what causes tides site:good.test")
    expect(turn.locator(".warnings")).to_contain_text("The source policy dropped 3 result(s)")
    assert source_hosts(ui_page) == {"docs.good.test"}
    fetched = domain_ui.hits()[before:]
    assert fetched
    assert set(fetched) == {"docs.good.test"}


def test_a_bad_domain_is_a_clear_error(ui_page: Page, domain_ui: DomainUi) -> None:
    ui_page.goto("/")
    ask(ui_page, "what causes tides site:evil.test:8080")
    turn = ui_page.locator(".turn").last
    expect(turn.locator(".error")).to_contain_text("carries a port")
