"""The settings panel in a real browser against the real orchestrator: the values load, a change
is saved and the next question uses it (web search off: nothing reaches SearXNG), secrets are
never shown, and a bad value is refused with the server's message."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.ui.world import UiWorld


@pytest.fixture(autouse=True)
def reset_settings(world: UiWorld) -> Iterator[None]:
    """Every other UI test shares this server: put its settings back afterwards."""
    yield
    names = ["web_search", "top_urls", "mode", "brave_api_key", "searxng_url"]
    reply = httpx.patch(f"{world.base_url}/v1/settings", json=dict.fromkeys(names), timeout=30)
    assert reply.status_code == 200, reply.text


def open_settings(page: Page) -> None:
    page.goto("/")
    page.get_by_role("button", name="Settings").click()
    expect(page.get_by_role("dialog", name="Settings")).to_be_visible()


def test_settings_saved_apply_to_the_next_question(page: Page, world: UiWorld) -> None:
    open_settings(page)
    dialog = page.get_by_role("dialog", name="Settings")
    expect(dialog.get_by_label("Web search")).to_have_value("on")
    expect(dialog.locator("#settings-privacy")).to_contain_text("SearXNG")
    dialog.get_by_label("Web search").select_option("off")
    dialog.get_by_label("Brave Search API key").fill("brave-secret-in-the-browser")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()

    searched = world.call(lambda: len(world.searx.queries))
    page.get_by_role("combobox", name="Question").fill("what causes tides")
    page.keyboard.press("Enter")
    turn = page.locator(".turn").last
    expect(turn.locator(".status")).to_have_text(re.compile(r"^Answered in"))
    assert world.call(lambda: len(world.searx.queries)) == searched

    page.get_by_role("button", name="Settings").click()
    expect(dialog.get_by_label("Web search")).to_have_value("off")
    expect(dialog.locator("#settings-privacy")).to_contain_text("Web search is off")
    expect(dialog.get_by_label("Brave Search API key")).to_have_attribute(
        "placeholder", "set (type to replace)"
    )
    expect(dialog.get_by_label("Brave Search API key")).to_have_value("")
    assert "brave-secret-in-the-browser" not in page.content()


def test_a_bad_value_is_refused_with_the_servers_message(page: Page) -> None:
    open_settings(page)
    dialog = page.get_by_role("dialog", name="Settings")
    # (the browser itself refuses an out-of-range number; a URL's scheme is the server's rule)
    dialog.get_by_label("SearXNG instances (comma-separated URLs)").fill("ftp://example.org")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.locator("#settings-status")).to_contain_text("searxng_url")
    expect(dialog).to_be_visible()
