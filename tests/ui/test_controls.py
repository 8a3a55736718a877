"""The web UI does what the API does (issue 27 item 1), in a real browser against the real
orchestrator: edit a turn and regenerate from it, rename, the mode / answer length / sources
options, the memory meter, a research run listed once, and highlighted code blocks. Each is
driven by keyboard where a person would, and checked on the server too."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, Request, expect

from services.orchestrator.tests.fakes.llm_script import Fail, Say
from tests.ui.conftest import low_contrast, shot
from tests.ui.test_quick import ask
from tests.ui.test_research import start_research
from tests.ui.world import UiWorld


def answered(page: Page, n: int) -> None:
    """Wait until turn ``n`` (0-based) has finished."""
    expect(page.locator(".turn").nth(n).locator(".status")).to_have_text(re.compile("^Answered"))


def searches(page: Page) -> list[dict[str, Any]]:
    """Record the body of every POST /v1/search the page sends (the list fills as it goes)."""
    bodies: list[dict[str, Any]] = []

    def on_request(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/v1/search"):
            body = request.post_data_json
            assert isinstance(body, dict)
            bodies.append(body)

    page.on("request", on_request)
    return bodies


def session_of(page: Page) -> dict[str, Any]:
    session_id = page.url.rsplit("=", 1)[1]
    reply = page.request.get(f"/v1/sessions/{session_id}")
    assert reply.ok, reply.text()
    body: dict[str, Any] = reply.json()
    return body


def test_edit_a_turn_and_regenerate_from_it(page: Page, world: UiWorld) -> None:
    sent = searches(page)
    page.goto("/")
    ask(page, "what causes tides")
    answered(page, 0)
    ask(page, "and neap tides")
    answered(page, 1)
    first = page.locator(".turn").first
    first.get_by_role("button", name="Edit question: what causes tides").click()
    box = page.get_by_role("textbox", name="Edited question")
    expect(box).to_be_focused()
    expect(box).to_have_value("what causes tides")
    page.keyboard.press("Escape")  # cancel: nothing sent, the question is back
    expect(first.locator(".question")).to_have_text("what causes tides")
    expect(first.get_by_role("button", name=re.compile("^Edit question"))).to_be_focused()
    page.keyboard.press("Enter")
    box.fill("what causes spring tides")
    page.keyboard.press("Enter")
    # the edited turn replaced it and every turn after it, on the page and on the server
    expect(page.locator(".turn")).to_have_count(1)
    answered(page, 0)
    expect(page.locator(".turn .question")).to_have_text("what causes spring tides")
    assert sent[-1]["edit_turn"] == 1
    assert sent[-1]["query"] == "what causes spring tides"
    stored = session_of(page)["turns"]
    assert [t["question"] for t in stored] == ["what causes spring tides"]

    ask(page, "and in lakes")
    answered(page, 1)
    page.locator(".turn").nth(1).get_by_role("button", name=re.compile("^Regenerate")).click()
    expect(page.locator(".turn")).to_have_count(2)
    answered(page, 1)
    assert (sent[-1]["edit_turn"], sent[-1]["query"]) == (2, "and in lakes")
    stored = session_of(page)["turns"]
    assert [t["question"] for t in stored] == ["what causes spring tides", "and in lakes"]
    shot(page, "edit-regenerate")


def test_a_failed_edit_leaves_the_conversation_as_it_was(page: Page, world: UiWorld) -> None:
    page.goto("/")
    ask(page, "what causes tides")
    answered(page, 0)
    world.call(lambda: world.llm.queue("synthesis", Fail(500, "model exploded")))
    page.get_by_role("button", name=re.compile("^Regenerate")).click()
    failed = page.locator(".turn").last
    expect(failed.locator(".status")).to_have_text(re.compile("^Failed"))
    # the server kept the old turn, and so does the page: shown again before the failed try
    turns = page.locator(".turn")
    expect(turns).to_have_count(2)
    expect(turns.first.locator(".question")).to_have_text("what causes tides")
    expect(turns.first.locator(".answer")).not_to_be_empty()
    assert [t["question"] for t in session_of(page)["turns"]] == ["what causes tides"]


def test_mode_length_and_sources_are_sent_and_kept(page: Page, world: UiWorld) -> None:
    sent = searches(page)
    page.goto("/")
    ask(page, "what causes tides")
    answered(page, 0)
    assert "options" not in sent[0]  # nothing chosen: the server's defaults
    page.get_by_role("combobox", name="Mode").select_option("speed")
    page.get_by_role("combobox", name="Answer length").select_option("brief")
    page.get_by_role("combobox", name="Search in").select_option("web")
    ask(page, "and neap tides")
    answered(page, 1)
    assert sent[1]["options"] == {"mode": "speed", "detail": "brief", "sources": ["web"]}
    # the choices stay for the next visit, and reach the next question
    page.goto("/")
    expect(page.get_by_role("combobox", name="Mode")).to_have_value("speed")
    expect(page.get_by_role("combobox", name="Answer length")).to_have_value("brief")
    page.get_by_role("combobox", name="Mode").focus()  # keyboard: arrows change a focused select
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("combobox", name="Mode")).to_have_value("balanced")
    ask(page, "what is a neap tide")
    answered(page, 0)
    assert sent[2]["options"]["mode"] == "balanced"
    assert low_contrast(page) == []


def test_the_memory_meter_shows_the_history_budget_used(page: Page, world: UiWorld) -> None:
    page.goto("/")
    meter = page.get_by_label("Memory")
    expect(meter).to_be_hidden()  # no conversation yet
    ask(page, "what causes tides")
    answered(page, 0)
    expect(meter).to_be_visible()
    expect(page.locator("#memory-text")).to_have_text(re.compile(r"^\d+ % · 1 turn$"))
    ask(page, "and neap tides")
    answered(page, 1)
    expect(page.locator("#memory-text")).to_have_text(re.compile(r"^\d+ % · 2 turns$"))
    memory = session_of(page)["memory"]
    assert float(meter.get_attribute("value") or 0) == memory["chars"] > 0
    assert float(meter.get_attribute("max") or 0) == memory["budget"]
    page.reload()  # a reopened conversation shows it at once
    expect(page.locator("#memory-text")).to_have_text(re.compile(r"· 2 turns$"))
    page.get_by_role("button", name="New conversation").click()
    expect(meter).to_be_hidden()


def test_rename_a_conversation_from_the_sidebar(page: Page, world: UiWorld) -> None:
    page.goto("/")
    ask(page, "what causes tides")
    answered(page, 0)
    session_id = page.url.rsplit("=", 1)[1]
    entry = page.locator("#session-list li", has=page.locator(f'[data-id="{session_id}"]'))
    entry.get_by_role("button", name="Rename “what causes tides”").click()
    title = page.get_by_role("textbox", name="New title for “what causes tides”")
    expect(title).to_be_focused()
    title.fill("Tides, explained")
    page.keyboard.press("Enter")
    link = page.locator(f'#session-list a[data-id="{session_id}"]')
    expect(link).to_have_text("Tides, explained")
    assert session_of(page)["title"] == "Tides, explained"


def test_a_research_run_is_listed_once_with_its_type(page: Page, world: UiWorld) -> None:
    page.goto("/")
    start_research(page, "how do sea tides work")
    view = page.get_by_role("region", name="Deep research")
    expect(view).to_have_attribute("data-status", "completed", timeout=60_000)
    run_id = page.url.rsplit("=", 1)[1]
    # the run's conversation is on the server as a research session
    listed = page.request.get("/v1/sessions?limit=100").json()["sessions"]
    mine = [s for s in listed if s["title"] == "how do sea tides work"]
    assert [s["type"] for s in mine] == ["research"]
    page.reload()
    entries = page.locator("#session-list li", has_text="how do sea tides work")
    expect(entries).to_have_count(1)
    expect(entries.locator(f'a[data-id="{run_id}"]')).to_have_attribute("data-type", "research")
    expect(entries.locator(".sr-only")).to_have_text(" (research)")


CODE_ANSWER = (
    "Tides are caused by the gravitational pull of the Moon and the Sun on the oceans [1]. "
    "A sketch of the idea:\n\n"
    "```python\ndef tide(hour):\n    return 2 * hour  # a toy model\n```\n"
)


def test_code_blocks_are_highlighted(page: Page, world: UiWorld) -> None:
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text))
    world.call(lambda: world.llm.queue("synthesis", Say(CODE_ANSWER)))
    page.goto("/")
    ask(page, "what causes tides")
    answered(page, 0)
    code = page.locator(".turn .answer pre code")
    expect(code).to_have_class(re.compile(r"\bhljs\b"))
    expect(code.locator("span.hljs-keyword", has_text="def")).to_have_count(1)
    expect(code.locator("span.hljs-comment")).to_have_text("# a toy model")
    expect(code).to_have_text("def tide(hour):\n    return 2 * hour  # a toy model\n")
    # only class-carrying spans: no inline style (the CSP allows none) and no other markup
    assert code.locator("*:not(span)").count() == 0
    assert code.locator("[style]").count() == 0
    page.reload()  # a stored answer is highlighted too
    expect(page.locator(".turn .answer pre code span.hljs-keyword").first).to_have_text("def")
    assert [m for m in messages if "Content Security" in m] == []
    assert low_contrast(page) == []
    shot(page, "highlighted-code")
