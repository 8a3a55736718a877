"""The deep-research view in a real browser: a slash command starts a run, the three panels
fill, and a reload mid-report re-attaches with Last-Event-ID (no gap, nothing twice)."""

from __future__ import annotations

import importlib.util
import re

import pytest
from playwright.sync_api import Browser, Page, Request, expect

from services.orchestrator.tests.fakes.llm_script import Hang
from tests.ui.conftest import low_contrast, new_context, shot
from tests.ui.world import UiWorld

# Skipped only while this orchestrator has no research API (branch `research` adds it).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("orchestrator.api.http.research_routes") is None,
    reason="the deep-research API (/v1/research, branch research) is not merged yet",
)


def start_research(page: Page, question: str) -> None:
    box = page.get_by_role("combobox", name="Question")
    box.type("/deep")
    page.keyboard.press("Enter")
    expect(page.locator("#mode-pill")).to_have_text("Deep research")
    box.type(question)
    page.keyboard.press("Enter")


def test_slash_command_starts_deep_research_and_the_panels_fill(
    browser: Browser, world: UiWorld
) -> None:
    context = new_context(browser, world)
    page = context.new_page()
    page.goto("/")
    start_research(page, "how do tides work")
    view = page.get_by_role("region", name="Deep research")
    expect(view).to_be_visible()
    expect(page).to_have_url(re.compile(r"\?r=[\w-]+$"))
    expect(page.locator("#r-title")).to_have_text("how do tides work")
    expect(view).to_have_attribute("data-status", "completed", timeout=60_000)
    # left: timestamped activity and counters; centre: plan, contents, report; right: sources
    expect(page.locator("#r-feed .feed-item time").first).to_have_text(re.compile(r"\d\d:\d\d"))
    assert page.locator("#r-feed .feed-item").count() >= 5
    assert int(page.locator("#r-counters strong").first.inner_text()) >= 1
    expect(page.locator("#r-plan .dimension").first).to_be_visible()
    expect(page.locator("#r-body")).not_to_be_empty()
    expect(page.locator("#r-source-list .source").first).to_be_visible()
    expect(page.get_by_role("heading", name="Continue exploring")).to_be_visible()
    expect(page.locator("#r-chips .chip").first).to_be_visible()
    assert page.locator("#r-chips .chip").count() <= 3
    assert low_contrast(page) == []
    shot(page, "research-light")
    page.locator("#r-body h2").last.scroll_into_view_if_needed()
    shot(page, "research-report-light")
    page.get_by_role("button", name=re.compile(r"^Sources")).click()
    expect(page.locator("#r-sources")).to_be_hidden()
    page.get_by_role("button", name=re.compile(r"^Sources")).click()
    expect(page.locator("#r-sources")).to_be_visible()
    url = page.url

    # a follow-up continues the run's conversation as a quick question
    page.locator("#r-chips .chip").first.click()
    follow = page.get_by_label("Follow-up question")
    expect(follow).to_have_value(re.compile(r"^Tell me more about "))
    expect(follow).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("region", name="Answers")).to_be_visible()
    expect(page).to_have_url(re.compile(r"\?s=[\w-]+$"))
    expect(page.locator(".turn").last.locator(".status")).to_have_text(re.compile(r"^Answered"))
    context.close()

    for name, dark, narrow in (("research-dark", True, False), ("research-narrow", False, True)):
        other = new_context(browser, world, dark=dark, narrow=narrow)
        tab = other.new_page()
        tab.goto(url)
        expect(tab.locator("#research-view")).to_have_attribute("data-status", "completed")
        expect(tab.locator("#r-body")).not_to_be_empty()
        if narrow:
            width = tab.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"the research view scrolls sideways at 390 px ({width})"
        assert low_contrast(tab) == []
        shot(tab, name)
        other.close()


def test_reload_mid_report_resumes_after_the_last_event(page: Page, world: UiWorld) -> None:
    page.goto("/")
    start_research(page, "what are neap tides")
    view = page.locator("#research-view")
    expect(page.locator("#r-body")).not_to_be_empty(timeout=60_000)
    if view.get_attribute("data-status") != "running":
        pytest.fail("the report finished before the reload; slow the scripted model down")
    resumed: list[Request] = []
    page.on(
        "request",
        lambda r: resumed.append(r) if r.url.endswith("/events") else None,
    )
    page.reload()
    expect(view).to_have_attribute("data-status", "completed", timeout=60_000)
    assert resumed, "the reloaded page did not follow the run's events"
    last = resumed[0].headers.get("last-event-id")
    assert last is not None, resumed[0].headers
    assert int(last) > 0, last
    research_id = page.url.rsplit("=", 1)[1]
    run = page.request.get(f"/v1/research/{research_id}").json()
    assert run["status"] == "completed"
    # nothing drawn twice: every heading of the final report appears once
    headings = page.locator("#r-body h2").all_inner_texts()
    assert len(headings) == len(set(headings)), headings
    assert headings == re.findall(r"^## (.+)$", run["report"], re.MULTILINE)


def test_stop_keeps_the_partial_report(page: Page, world: UiWorld) -> None:
    world.call(lambda: world.llm.queue("synthesis", Hang(after_tokens=6)))
    page.goto("/")
    start_research(page, "why do tides differ")
    view = page.locator("#research-view")
    expect(page.locator("#r-body")).not_to_be_empty(timeout=60_000)
    page.get_by_role("button", name="Stop").click()
    expect(view).to_have_attribute("data-status", "cancelled")
    expect(page.locator("#r-status")).to_have_text("Cancelled")
    expect(page.locator("#r-feed")).to_contain_text("the partial report is kept")
    expect(page.locator("#r-body")).not_to_be_empty()
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
