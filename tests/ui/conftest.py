"""Fixtures for the browser tests: one stack and one Chromium for this package (CI has 2 cores;
package scope: Playwright's sync API holds an event loop, which must be gone before any later
asyncio test runs), a fresh browser context (own storage) per test. Chromium is Debian's package
driven by Playwright for Python through ``executable_path``; no browser is ever downloaded.

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
    "Debian's chromium is missing: `make test` as root installs it (apt-get install -y chromium)"
)


def chromium_path() -> str:
    """Debian's Chromium binary, or fail saying how to install it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(CHROMIUM_HINT)
    return found


@pytest.fixture(scope="package")
def world() -> Iterator[UiWorld]:
    """The orchestrator and its (real or scripted) dependencies, shared by every UI test."""
    with running_world() as running:
        yield running


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="package")
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


# WCAG 2 contrast of every visible element with its own text against the first opaque
# background behind it; large text (24 px, or 18.66 px bold) needs 3:1, the rest 4.5:1.
_CONTRAST = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || c[3] === 1) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const bad = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.data.trim());
    const box = el.getBoundingClientRect();
    if (!own || !box.width || !box.height || el.closest('[hidden]')) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.opacity === '0') continue;
    const [a, b] = [lum(rgb(style.color).slice(0, 3)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) {
      const text = el.textContent.trim().slice(0, 30);
      bad.push(`${el.tagName}.${el.className} "${text}" ${ratio.toFixed(2)}`);
    }
  }
  return bad;
}"""


def low_contrast(page: Page) -> list[str]:
    """Visible text below WCAG AA contrast on ``page`` (empty when all of it passes)."""
    found: list[str] = page.evaluate(_CONTRAST)
    return found
