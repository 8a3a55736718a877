"""Fixtures for the browser tests: one stack and one Chromium for the whole run (CI has 2 cores),
a fresh browser context (own storage) per test. Chromium is Debian's package driven by
Playwright for Python through ``executable_path``; no browser is ever downloaded.

A missing prerequisite fails the tests with how to install it; nothing is skipped.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

from tests.conftest import ROOT
from tests.ui.world import UiWorld, running_world

SHOTS = ROOT / "build" / "ui-screenshots"
# A 2-core machine shared by many jobs: waits are generous, nothing asserts a duration.
expect.set_options(timeout=20_000)
CHROMIUM_HINT = (
    "Debian's chromium is missing: run `scripts/ci-apt.sh` as root (apt-get install -y chromium)"
)


def chromium_path() -> str:
    """Debian's Chromium binary, or fail saying how to install it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(CHROMIUM_HINT)
    return found


@pytest.fixture(scope="session")
def world() -> Iterator[UiWorld]:
    """The orchestrator and its (real or scripted) dependencies, shared by every UI test."""
    with running_world() as running:
        yield running


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=chromium_path())
    yield browser
    browser.close()


def new_context(
    browser: Browser, world: UiWorld, *, dark: bool = False, narrow: bool = False
) -> BrowserContext:
    """A fresh context: own localStorage, light or dark, desktop or 390 px wide."""
    context = browser.new_context(
        base_url=world.base_url,
        color_scheme="dark" if dark else "light",
        viewport={"width": 390, "height": 844} if narrow else {"width": 1280, "height": 800},
        reduced_motion="reduce",
    )
    context.set_default_timeout(15_000)
    return context


@pytest.fixture
def context(browser: Browser, world: UiWorld) -> Iterator[BrowserContext]:
    ctx = new_context(browser, world)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


def shot(page: Page, name: str) -> Path:
    """Save a screenshot artefact under build/ui-screenshots/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path
