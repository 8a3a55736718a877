"""Quick search in a real browser against the real orchestrator: streaming, sources first,
citation cards, Stop reaching the server, sessions from the URL, hostile text staying text."""

from __future__ import annotations

import re
import typing

import pytest
from orchestrator.core.events import EventType
from playwright.sync_api import Browser, Page, expect

from services.orchestrator.tests.fakes.llm_script import Fail, Hang, Say
from tests.ui.conftest import low_contrast, new_context, shot
from tests.ui.world import HOSTILE_TITLE, UiWorld

# Records, in DOM order of appearance, when the first source card and the first answer text
# show up, and every distinct length the answer had while it streamed.
WATCH = """
window.__seen = [];
window.__lengths = [];
new MutationObserver(() => {
  const seen = window.__seen;
  if (!seen.includes('sources') && document.querySelector('.source')) seen.push('sources');
  const answer = document.querySelector('.answer');
  const n = answer ? answer.textContent.trim().length : 0;
  if (n && !window.__seen.includes('answer')) window.__seen.push('answer');
  if (n && window.__lengths[window.__lengths.length - 1] !== n) window.__lengths.push(n);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def ask(page: Page, question: str) -> None:
    page.get_by_role("combobox", name="Question").fill(question)
    page.keyboard.press("Enter")


def test_answer_streams_after_its_sources_and_badges_show_source_cards(
    page: Page, world: UiWorld
) -> None:
    page.add_init_script(WATCH)
    page.goto("/")
    ask(page, "what causes tides")
    turn = page.locator(".turn").last
    expect(turn.locator(".status")).to_have_text(re.compile(r"^Answered in"))
    assert page.evaluate("window.__seen") == ["sources", "answer"]
    lengths = page.evaluate("window.__lengths")
    assert len(lengths) >= 3, f"the answer appeared at once, not streamed: {lengths}"
    expect(turn.locator(".source")).to_have_count(4)
    expect(turn.locator(".source").first).to_contain_text("All about")
    badge = turn.locator("button.cite").first
    expect(badge).to_be_visible()
    expect(page.locator("#source-card")).to_be_hidden()
    badge.hover()
    card = page.locator("#source-card")
    expect(card).to_be_visible()
    expect(card.locator(".card-host")).to_contain_text("127.0.0.1")
    expect(card.locator(".card-title")).to_contain_text("All about")
    # the card quotes what the model saw for that source (sources[].passages)
    expect(card.locator("blockquote").first).to_contain_text(re.compile(r"Moon|tides|Tides"))
    shot(page, "source-card")
    page.mouse.move(0, 0)
    expect(card).to_be_hidden()
    badge.focus()  # keyboard users get the same card
    expect(card).to_be_visible()
    page.keyboard.press("Escape")
    expect(card).to_be_hidden()
    page.keyboard.press("Enter")  # the badge is a button: it points at its numbered source
    n = badge.get_attribute("data-n")
    expect(turn.locator(f'.source[id$="-src-{n}"]')).to_have_class(re.compile(r"\bflash\b"))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    turn.get_by_role("button", name="Copy answer").click()
    expect(turn.get_by_role("button", name="Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("# what causes tides\n")
    with page.expect_download() as download:
        turn.get_by_role("button", name="Download Markdown").click()
    text = download.value.path().read_text(encoding="utf-8")
    assert text.startswith("# what causes tides\n")
    assert "## Sources" in text
    assert re.search(r"\[\d\]", text)
    assert low_contrast(page) == []
    shot(page, "quick-light")


def test_stop_mid_answer_cancels_the_run_on_the_server(page: Page, world: UiWorld) -> None:
    world.call(lambda: world.llm.queue("synthesis", Hang(after_tokens=4)))
    before = world.call(lambda: world.llm.cancelled_streams)
    page.goto("/")
    ask(page, "how do spring tides form")
    turn = page.locator(".turn").last
    expect(turn.locator(".answer")).not_to_be_empty()
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_visible()
    stop.click()
    expect(turn.locator(".status")).to_have_text(re.compile("^Stopped"))
    world.wait(lambda: world.llm.cancelled_streams == before + 1)
    expect(page.get_by_role("button", name="Ask")).to_be_visible()


def test_a_session_reloads_from_its_url_and_can_be_deleted(
    browser: Browser, world: UiWorld
) -> None:
    context = new_context(browser, world)
    page = context.new_page()
    page.goto("/")
    ask(page, "what causes tides")
    expect(page.locator(".turn .status")).to_have_text(re.compile(r"^Answered in"))
    ask(page, "and neap tides")
    expect(page.locator(".turn").nth(1).locator(".status")).to_have_text(re.compile("^Answered"))
    url = page.url
    assert re.search(r"\?s=[0-9a-f]{32}$", url), url
    answer = page.locator(".turn .answer").first.inner_text()

    page.reload()
    turns = page.locator(".turn")
    expect(turns).to_have_count(2)
    expect(turns.first.locator(".question")).to_have_text("what causes tides")
    assert turns.first.locator(".answer").inner_text() == answer
    expect(turns.first.locator("button.cite").first).to_be_visible()
    expect(turns.first.locator(".source").first).to_be_visible()
    session_id = url.rsplit("=", 1)[1]
    entry = page.locator("#session-list section", has_text="Today").locator(
        "li", has=page.locator(f'[data-id="{session_id}"]')
    )
    expect(entry.get_by_role("link")).to_have_text("what causes tides")
    expect(entry.get_by_role("link")).to_have_attribute("aria-current", "page")

    # the same URL in a new tab of another browser profile works too (it is the server's)
    other = new_context(browser, world, dark=True)
    tab = other.new_page()
    tab.goto(url)
    expect(tab.locator(".turn")).to_have_count(2)
    assert low_contrast(tab) == []
    shot(tab, "quick-dark")
    other.close()

    narrow = new_context(browser, world, narrow=True)
    small = narrow.new_page()
    small.goto(url)
    expect(small.locator(".turn")).to_have_count(2)
    width = small.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways at 390 px ({width} px wide)"
    expect(small.locator("#sidebar")).not_to_be_in_viewport()
    shot(small, "quick-narrow")
    small.get_by_role("button", name="Conversations").click()
    expect(small.locator("#sidebar")).to_be_in_viewport()
    shot(small, "sidebar-narrow")
    narrow.close()

    entry.get_by_role("button", name="Delete “what causes tides”").click()
    expect(page.locator(f'[data-id="{session_id}"]')).to_have_count(0)
    expect(page).to_have_url(re.compile(r"/$"))
    gone = page.request.get(url.replace("/?s=", "/v1/sessions/"))
    assert gone.status == 404
    context.close()


def test_hostile_page_text_renders_inert(page: Page, world: UiWorld) -> None:
    # Cited like the page's own words, so the engine keeps the citation; markup all around.
    hostile_answer = (
        "Tides are also explained by this page, which tries "
        '<img src=x onerror="window.__pwned=5"> to run code in your browser [1]. '
        "It says <script>window.__pwned=4</script> and [a link](javascript:window.__pwned=6).\n\n"
        "```\n<b>code</b> [1]\n```"
    )
    world.call(lambda: world.llm.queue("synthesis", Say(hostile_answer)))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto("/")
    ask(page, "hostile page about tides")
    turn = page.locator(".turn").last
    expect(turn.locator(".status")).to_have_text(re.compile(r"^Answered in"))
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img, #source-card img").count() == 0
    assert page.locator('a[href^="javascript"]').count() == 0
    assert page.locator("[onerror]").count() == 0
    # the markup is shown as text where the page's text is shown
    expect(turn.locator(".src-title")).to_have_text(HOSTILE_TITLE)
    expect(turn.locator(".src-excerpt")).to_contain_text("<script>")
    turn.locator("button.cite").first.hover()
    expect(page.locator("#source-card .card-title")).to_contain_text("<img src=x")
    expect(turn.locator(".answer code")).to_contain_text("[1]")  # no badge inside code
    assert page.evaluate("window.__pwned") is None
    assert errors == []


@pytest.mark.skipif(
    "thinking" not in typing.get_args(EventType),
    reason="this orchestrator sends no thinking events yet (branch conv adds them)",
)
def test_a_reasoning_models_thinking_fills_a_collapsed_panel(page: Page, world: UiWorld) -> None:
    reply = Say(
        "Tides are caused by the gravitational pull of the Moon and the Sun on the oceans [1].",
        reasoning=["The user asks ", "about tides; ", "source 1 explains them."],
    )
    world.call(lambda: world.llm.queue("synthesis", reply))
    page.goto("/")
    ask(page, "why are there tides")
    turn = page.locator(".turn").last
    expect(turn.locator(".status")).to_have_text(re.compile(r"^Answered in"))
    panel = turn.locator("details.thinking")
    expect(panel).to_be_visible()
    expect(panel.locator(".thinking-text")).to_be_hidden()  # collapsed until asked
    panel.locator("summary").click()
    expect(panel.locator(".thinking-text")).to_have_text(
        "The user asks about tides; source 1 explains them."
    )
    expect(turn.locator(".answer")).not_to_contain_text("The user asks")


def test_warnings_are_listed_and_errors_explained(page: Page, world: UiWorld) -> None:
    def degrade() -> None:
        world.searx.unresponsive = [("brave", "timeout")]
        world.llm.queue("synthesis", Fail(500, "model exploded"))

    world.call(degrade)
    try:
        page.goto("/")
        ask(page, "what are neap tides")
        turn = page.locator(".turn").last
        expect(turn.locator(".status")).to_have_text(re.compile(r"^Failed in"))
        expect(turn.get_by_role("list", name="Warnings")).to_contain_text("brave")
        error = turn.get_by_role("alert")
        expect(error).to_be_visible()
        expect(error).to_contain_text("language model server")  # what it means, not a code
    finally:
        world.call(lambda: setattr(world.searx, "unresponsive", []))


def test_the_sidebar_groups_by_day(page: Page, world: UiWorld) -> None:
    page.goto("/")
    day = 864e5
    labels = page.evaluate(
        """async (day) => {
          const { group } = await import('/ui/js/sessions.js');
          const now = new Date(2026, 10, 24, 15, 0);
          const at = (ms) => ({ id: String(ms), updated: now.getTime() - ms });
          const items = [at(60e3), at(20 * 3600e3), at(2 * day), at(5 * day), at(30 * day)];
          return group(items, now).map(([label, list]) => [label, list.length]);
        }""",
        day,
    )
    assert labels == [["Today", 1], ["Yesterday", 1], ["This week", 2], ["Older", 1]]


def test_sentences_the_sources_do_not_support_carry_a_quiet_mark(
    page: Page, world: UiWorld
) -> None:
    # The first sentence is the fixture page's own ("Tides are caused by ... Moon and the Sun
    # on the oceans"); the second claims what no page says.
    reply = Say(
        "Tides are caused by the gravitational pull of the Moon and the Sun on the oceans [1]. "
        "Volcanic eruptions under the seabed double every tide in December [1]."
    )
    world.call(lambda: world.llm.queue("synthesis", reply))
    page.goto("/")
    ask(page, "what causes tides")
    turn = page.locator(".turn").last
    expect(turn.locator(".status")).to_have_text(re.compile(r"^Answered in"))
    marks = turn.locator(".answer .support-unsupported")
    expect(marks).to_have_count(1)
    expect(marks.first).to_have_attribute("title", "No source supports this sentence")
    # the unsupported sentence lost its citation; the supported one keeps its badge
    expect(turn.locator(".answer button.cite")).to_have_count(1)
    expect(turn.locator(".support-score")).to_have_text(
        "Supported by its sources: 1 of 2 claims (50 %)"
    )
