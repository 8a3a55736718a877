"""The documents panel in a real browser against the real orchestrator, reader and index:
upload (pick and drag-drop) then ask about it a moment later, a PDF cited by page, a refused
upload explained, the list, removal and pinning a question to a file."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import FilePayload, Page, expect

from services.orchestrator.tests.integration.documents_support import paged_pdf
from tests.ui.conftest import shot
from tests.ui.world import UiWorld

NOTE = b"# Boathouse\n\nThe boathouse key hangs behind the blue door.\n"
PDF = paged_pdf(
    [
        ["Rowing club handbook."],
        ["Oars are stored on the rack."],
        ["The slipway was paved in 1992."],
    ],
    title="Club handbook",
)

# Drop a file on the panel's drop zone, as a drag from the desktop would.
DROP = """([selector, name, text]) => {
  const data = new DataTransfer();
  data.items.add(new File([text], name, {type: 'text/markdown'}));
  const zone = document.querySelector(selector);
  zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: data, bubbles: true}));
  zone.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true}));
}"""


def open_panel(page: Page) -> None:
    page.get_by_role("button", name="Documents").click()
    expect(page.get_by_role("dialog", name="Your documents")).to_be_visible()


def ask(page: Page, question: str) -> None:
    page.get_by_role("combobox", name="Question").fill(question)
    page.keyboard.press("Enter")
    expect(page.locator(".turn").last.locator(".status")).to_have_text(re.compile(r"^Answered in"))


def uploaded(world: UiWorld) -> list[str]:
    root = Path(world.upload_dir)
    return sorted(p.name for p in root.rglob("*") if p.is_file())


def test_upload_then_ask_pinned_then_remove(page: Page, world: UiWorld) -> None:
    page.goto("/")
    open_panel(page)
    page.locator("#doc-files").set_input_files(
        [
            FilePayload(name="boathouse.md", mimeType="text/markdown", buffer=NOTE),
            FilePayload(name="handbook.pdf", mimeType="application/pdf", buffer=PDF),
        ]
    )
    dialog = page.get_by_role("dialog", name="Your documents")
    expect(dialog.get_by_role("status")).to_contain_text("Added boathouse.md, handbook.pdf")
    row = dialog.locator(".doc", has_text="handbook.pdf")
    expect(row.locator(".doc-facts")).to_contain_text(re.compile(r"PDF · .* · 3 pages"))
    shot(page, "documents-panel")

    # Pinned to the note: asked a moment later, the answer's source is the upload.
    dialog.get_by_role("button", name="Pin questions to boathouse.md").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#scope-pin")).to_contain_text("boathouse.md")
    ask(page, "where does the boathouse key hang")
    sources = page.locator(".turn").last.locator(".source")
    expect(sources).to_have_count(1)
    expect(sources.first).to_contain_text("local · boathouse.md")

    # Pinned to the PDF: the source names the page its passage comes from.
    open_panel(page)
    dialog.get_by_role("button", name="Pin questions to handbook.pdf").click()
    ask(page, "when was the slipway paved")
    source = page.locator(".turn").last.locator(".source").first
    expect(source).to_contain_text("local · handbook.pdf · p. 3")

    # Removing the pinned note deletes the upload and unpins.
    page.get_by_role("button", name="Unpin").click()
    expect(page.locator("#scope-pin")).to_be_hidden()
    open_panel(page)
    dialog.get_by_role("button", name="Remove boathouse.md").click()
    expect(dialog.get_by_role("status")).to_contain_text("Removed boathouse.md")
    expect(dialog.locator(".doc", has_text="boathouse.md")).to_have_count(0)
    assert "boathouse.md" not in uploaded(world)
    assert "handbook.pdf" in uploaded(world)


def test_drag_and_drop_and_a_refused_file(page: Page, world: UiWorld) -> None:
    page.goto("/")
    open_panel(page)
    dialog = page.get_by_role("dialog", name="Your documents")
    page.evaluate(
        DROP, ["#doc-drop", "dropped.md", "# Dropped\n\nThe tide table sits by the till.\n"]
    )
    expect(dialog.get_by_role("status")).to_contain_text("Added dropped.md")
    expect(dialog.locator(".doc", has_text="dropped.md")).to_have_count(1)
    page.locator("#doc-files").set_input_files(
        [FilePayload(name="archive.zip", mimeType="application/zip", buffer=b"PK\x03\x04zip")]
    )
    expect(dialog.get_by_role("alert")).to_contain_text("Not added")
    expect(dialog.get_by_role("alert")).to_contain_text("archive.zip")
    assert "archive.zip" not in uploaded(world)
