"""The schedules panel in a real browser against the real orchestrator: add a scheduled question,
see its timetable, pause and resume it, a bad cron explained, delete it (its reports stay)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.ui.conftest import shot
from tests.ui.world import UiWorld


def test_add_pause_resume_refuse_and_delete_a_schedule(page: Page, world: UiWorld) -> None:
    page.goto("/")
    page.get_by_role("button", name="Schedules").click()
    dialog = page.get_by_role("dialog", name="Scheduled research")
    expect(dialog).to_be_visible()

    dialog.get_by_label("Question").fill("what is new about tides")
    dialog.get_by_label("When").fill("every other day")
    dialog.get_by_role("button", name="Add schedule").click()
    expect(dialog.get_by_role("alert")).to_contain_text("five fields")

    dialog.get_by_label("When").fill("weekly")
    dialog.get_by_label("Time zone").fill("Europe/Paris")
    dialog.get_by_role("button", name="Add schedule").click()
    expect(dialog.get_by_role("status")).to_have_text("Schedule added.")
    row = dialog.locator(".doc", has_text="what is new about tides")
    expect(row.locator(".doc-facts")).to_contain_text("weekly (Europe/Paris) · next ")
    expect(row.locator(".doc-facts")).to_contain_text("no run yet")
    shot(page, "schedules-panel")

    row.get_by_role("button", name="Pause").click()
    expect(row.locator(".doc-facts")).to_contain_text("paused")
    row.get_by_role("button", name="Resume").click()
    expect(row.locator(".doc-facts")).to_contain_text("next ")

    page.once("dialog", lambda d: d.accept())
    row.get_by_role("button", name="Delete what is new about tides").click()
    expect(dialog.locator(".doc")).to_have_count(0)
    expect(dialog.get_by_role("status")).to_have_text("Deleted.")
