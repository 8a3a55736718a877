"""The download menus in a real browser: a finished research report saved as PDF and HTML, a
conversation's sources as BibTeX, each a file Chromium really downloads (fetched with the
page's token handling, not a plain link) in the format its menu item names. Named to run after
test_keyboard.py, whose tab walk assumes a short sidebar (the runs made here stay listed)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.ui.test_quick import ask
from tests.ui.test_research import start_research
from tests.ui.world import UiWorld


def _download(page: Page, menu: str, item: str, tmp_path: Path) -> tuple[str, bytes]:
    page.locator(f"#{menu} summary").click()
    with page.expect_download() as info:
        page.locator(f"#{menu}").get_by_role("menuitem", name=item).click()
    download = info.value
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    return download.suggested_filename, target.read_bytes()


def test_a_report_downloads_as_pdf_and_html(page: Page, world: UiWorld, tmp_path: Path) -> None:
    page.goto("/")
    start_research(page, "how do tides work")
    view = page.get_by_role("region", name="Deep research")
    expect(view).to_have_attribute("data-status", "completed", timeout=60_000)
    name, body = _download(page, "r-export", "PDF (.pdf)", tmp_path)
    assert re.fullmatch(r"research-[0-9a-f]{32}\.pdf", name)
    assert body.startswith(b"%PDF")
    name, body = _download(page, "r-export", "Web page (.html)", tmp_path)
    assert name.endswith(".html")
    assert b'class="cite"' in body
    expect(page.locator("#r-export .export-status")).to_have_text("")


def test_a_conversation_downloads_its_sources_as_bibtex(
    page: Page, world: UiWorld, tmp_path: Path
) -> None:
    page.goto("/")
    ask(page, "what causes tides")
    expect(page.locator(".turn").last.locator(".status")).to_have_text(re.compile(r"^Answered"))
    expect(page.locator("#s-export")).to_be_visible()
    name, body = _download(page, "s-export", "Sources as BibTeX (.bib)", tmp_path)
    assert name.endswith(".bib")
    assert body.count(b"@misc{") >= 1
