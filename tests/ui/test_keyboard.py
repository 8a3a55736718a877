"""Keyboard-only use: slash commands and the mode pill, visible focus, the token prompt."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.ui.conftest import shot
from tests.ui.world import TOKEN, UiWorld, has_tokens


def test_slash_commands_pick_a_mode_with_the_keyboard(page: Page, world: UiWorld) -> None:
    page.goto("/")
    box = page.get_by_role("combobox", name="Question")
    page.keyboard.press("/")  # from anywhere, "/" lands in the question box
    expect(box).to_be_focused()
    expect(box).to_have_value("/")
    menu = page.get_by_role("listbox", name="Commands")
    expect(menu).to_be_visible()
    options = menu.get_by_role("option")
    expect(options).to_have_count(2)
    expect(options.first).to_have_attribute("aria-selected", "true")
    shot(page, "slash-menu")
    page.keyboard.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", "cmd-due-diligence")
    page.keyboard.press("Enter")
    pill = page.locator("#mode-pill")
    expect(pill).to_have_text("Due diligence")
    expect(box).to_have_value("")
    expect(menu).to_be_hidden()
    page.keyboard.press("Backspace")  # at the start of the box: clears the mode
    expect(pill).to_be_hidden()

    box.type("/deep")
    expect(options).to_have_count(1)
    page.keyboard.press("Tab")
    expect(pill).to_have_text("Deep research")
    expect(box).to_be_focused()
    box.type("x")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Backspace")  # at the start with text after it: still clears the mode
    expect(pill).to_be_hidden()
    expect(box).to_have_value("x")

    box.fill("")
    box.type("/")
    expect(menu).to_be_visible()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(pill).to_be_hidden()
    expect(box).to_have_value("/")


def test_every_control_is_reachable_and_shows_focus(page: Page, world: UiWorld) -> None:
    page.goto("/")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the question box")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.get_by_role("combobox", name="Question")).to_be_focused()
    reached = set()
    # once round the whole page, back to the question box (the sidebar lists every earlier
    # test's conversations, each with its rename and delete buttons)
    for _ in range(400):
        if "q" in reached:
            break
        page.keyboard.press("Tab")
        info = page.evaluate(
            """() => { const el = document.activeElement; const s = getComputedStyle(el);
              return {id: el.id, tag: el.tagName, outline: s.outlineStyle,
                      width: s.outlineWidth}; }"""
        )
        reached.add(info["id"] or info["tag"])
        if info["tag"] == "BUTTON":
            assert info["outline"] != "none", f"no visible focus on {info}"
            assert info["width"] != "0px", f"no visible focus on {info}"
    # the question's options (mode, answer length, sources) come after Ask
    expected = {"new-chat", "q", "ask", "opt-mode", "opt-detail", "opt-sources"}
    assert expected <= reached, reached


@pytest.mark.skipif(not has_tokens(), reason="bearer tokens (branch sec) are not merged yet")
def test_a_server_that_needs_a_token_asks_once_and_keeps_it(
    browser: Browser, world: UiWorld
) -> None:
    assert world.token_url is not None
    context = browser.new_context(base_url=world.token_url)
    page = context.new_page()
    page.goto("/")  # the page and its files load without a token; the API asks for one
    dialog = page.get_by_role("dialog", name="Access token")
    expect(dialog).to_be_visible()
    page.get_by_label("Token", exact=True).fill(TOKEN)
    page.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()
    page.get_by_role("combobox", name="Question").fill("what causes tides")
    page.keyboard.press("Enter")
    expect(page.locator(".turn .status")).to_have_text(re.compile(r"^Answered in"))
    assert page.evaluate("localStorage.getItem('quarry.token')") == TOKEN
    page.reload()
    expect(page.locator(".turn")).to_have_count(1)  # the session reloads with the kept token
    expect(dialog).to_be_hidden()
    context.close()

    # a link can hand the token over; it leaves the address bar at once
    context = browser.new_context(base_url=world.token_url)
    page = context.new_page()
    page.goto(f"/#token={TOKEN}")
    expect(page).to_have_url(f"{world.token_url}/")
    # a fresh browser lists the server's conversations (GET /v1/sessions needs the token)
    sessions = page.get_by_role("navigation", name="Past conversations and reports")
    expect(sessions.get_by_role("link", name="what causes tides")).to_be_visible()
    expect(page.get_by_role("dialog", name="Access token")).to_be_hidden()
    assert page.evaluate("localStorage.getItem('quarry.token')") == TOKEN
    context.close()
