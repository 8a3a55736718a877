"""Every export format of a fixture report and a fixture conversation opens in an independent
reader and keeps every citation resolvable: HTML parsed by lxml, JSON loaded, BibTeX read by
bibtexparser, RIS by rispy, and the PDF printed by the real Chromium and read back by pypdf
(its text, its page numbers, its link annotations). Hostile text stays text."""

from __future__ import annotations

import asyncio
import io
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import lxml.html
import orjson
import pytest
import rispy
from bibtexparser.entrypoint import parse_string
from orchestrator.adapters.exports import render
from orchestrator.adapters.exports.pdf import PdfFailed, PdfRenderer
from orchestrator.adapters.exports.render import FORMATS, export
from orchestrator.core.exports.document import CITATION, Document, from_research, from_session
from orchestrator.core.research.state import ResearchState, Source
from orchestrator.core.research.views import report_markdown
from orchestrator.core.sessions import Session, Turn
from orchestrator.core.store import RunRecord
from pypdf import PdfReader
from quarry_cli import export as cli_export

CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="no Chromium")
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'

REPORT = f"""# how do tides work

## Contents

- [Summary](#summary)
- [What causes tides](#what-causes-tides)
- [Sources](#sources)

## Summary

Tides are caused by the moon's gravity pulling on the oceans [1]. Spring tides happen when
the sun and the moon align [2][3]. {HOSTILE} [a link](javascript:alert(1))

## What causes tides

The moon's gravity raises a bulge of water on the side of the Earth facing it [1]. Local
notes say neap tides are weaker than spring tides [4].

## Sources

[1] [Tides](https://example.org/tides)
"""


def _state() -> ResearchState:
    state = ResearchState(report=REPORT, cited=[1, 2, 3, 4])
    state.sources = [
        Source(n=1, url="https://example.org/tides?a=1&b={x}", title=f"Tides {HOSTILE}",
               text="Tides are caused by the moon's gravity pulling on the oceans. The moon's "
               "gravity raises a bulge of water on the side of the Earth facing it."),
        Source(n=2, url="https://example.com/spring", title="Spring tides, {braces} & 100%",
               text="Spring tides happen when the sun and the moon align."),
        Source(n=3, url="https://example.net/sun", title="The sun",
               text="When the sun and the moon align their pulls add up."),
        Source(n=4, url="local:notes/tides.md", title="My notes", origin="local",
               text="Neap tides are weaker than spring tides."),
    ]  # fmt: skip
    state.timings_ms = {"scope": 10.0, "synthesis": 20.0}
    return state


def research_doc() -> Document:
    now = time.time()
    record = RunRecord(
        id="a" * 32, query="how do tides work", mode="deep-research", status="completed",
        phase="synthesis", session_id=None, state={}, created_at=now, updated_at=now,
    )  # fmt: skip
    state = _state()
    return from_research(record, state, report_markdown(record, state))


def session_doc(turn: int | None = None) -> Document:
    def src(n: int, url: str, text: str) -> dict[str, object]:
        return {"n": n, "url": url, "title": f"page {n}", "excerpt": text[:40], "passages": [text]}

    turns = [
        Turn("what is a tide?", "A tide is the rise and fall of the sea [1]. It repeats [2].",
             (src(1, "https://a.example/1", "A tide is the rise and fall of the sea level."),
              src(2, "https://a.example/2", "Tides repeat twice a day.")), "answered", 1.0),
        Turn("and a neap tide?", "A neap tide is a weak tide [1].",
             (src(1, "https://b.example/1", "A neap tide is a weak tide with a small range."),),
             "answered", 2.0),
    ]  # fmt: skip
    session = Session(id="s1", created=time.time(), touched=time.time(), turns=turns)
    return from_session(session, turn)


def _cited(doc: Document) -> list[tuple[int, int]]:
    """(part index, n) of every citation in every part."""
    return [(i, n) for i, p in enumerate(doc.parts) for n in p.cited()]


async def _export(doc: Document, fmt: str) -> bytes:
    return await export(doc, fmt, PdfRenderer(CHROMIUM, 120))


async def test_markdown_keeps_the_report_and_its_source_list() -> None:
    text = (await _export(research_doc(), "md")).decode()
    assert text == REPORT  # the report as the Markdown export always was
    conversation = (await _export(session_doc(), "md")).decode()
    for line in ("[1] [page 1](https://a.example/1)", "[1] [page 1](https://b.example/1)"):
        assert line in conversation


@pytest.mark.parametrize("make", [research_doc, session_doc, lambda: session_doc(2)])
async def test_html_links_every_citation_to_its_own_source_and_quotes_the_passages(
    make: object,
) -> None:
    doc = make()  # type: ignore[operator]
    page = lxml.html.fromstring(await _export(doc, "html"))
    ids = set(page.xpath("//@id"))
    links = page.xpath('//a[@class="cite"]/@href')
    wanted = {f"#{doc.parts[i].anchor(n)}" for i, n in _cited(doc)}
    assert set(links) == wanted
    assert wanted
    assert all(href[1:] in ids for href in links)
    for part in doc.parts:  # each source: its link and every passage, quoted
        for src in part.sources:
            item = page.get_element_by_id(part.anchor(src.n))
            assert [q.text_content() for q in item.xpath(".//blockquote")] == list(src.passages)
    # the report's Contents links land on its headings
    for href in page.xpath('//a[starts-with(@href, "#")]/@href'):
        assert href[1:] in ids, href


async def test_html_is_sanitised_and_self_contained() -> None:
    raw = (await _export(research_doc(), "html")).decode()
    page = lxml.html.fromstring(raw)
    assert not page.xpath("//script | //img | //iframe | //link | //@onerror | //@src")
    assert not [h for h in page.xpath("//a/@href") if h.lower().startswith("javascript")]
    assert HOSTILE.split(">")[0].replace("<", "&lt;") in raw  # shown as text
    csp = page.xpath('//meta[@http-equiv="Content-Security-Policy"]/@content')
    assert csp
    assert "default-src 'none'" in csp[0]
    assert page.xpath("//style")
    assert "counter(page)" in raw


async def test_json_has_text_citations_with_passages_sources_and_timings() -> None:
    out = orjson.loads(await _export(research_doc(), "json"))
    part = out["parts"][0]
    assert [c["n"] for c in part["citations"]] == [1, 2, 3, 4]
    assert all(c["passages"] and c["url"] for c in part["citations"])
    assert {int(n) for n in CITATION.findall(part["text"])} <= {s["n"] for s in part["sources"]}
    assert out["timings_ms"] == {"scope": 10.0, "synthesis": 20.0}
    graded = {s["support"] for s in part["sentences"]}
    assert "supported" in graded
    conversation = orjson.loads(await _export(session_doc(), "json"))
    assert [len(p["citations"]) for p in conversation["parts"]] == [2, 1]


@pytest.mark.parametrize("make", [research_doc, session_doc])
async def test_bibtex_and_ris_parse_with_every_source(make: object) -> None:
    doc = make()  # type: ignore[operator]
    sources = [s for p in doc.parts for s in p.sources]
    library = parse_string((await _export(doc, "bibtex")).decode())
    assert not library.failed_blocks
    assert len(library.entries) == len(sources)
    assert len({e.key for e in library.entries}) == len(sources)  # turns never collide
    urls = [e.fields_dict["url"].value for e in library.entries]
    assert [u.replace("%7B", "{").replace("%7D", "}") for u in urls] == [s.url for s in sources]
    assert (
        library.entries[0]
        .fields_dict["title"]
        .value.startswith("Tides" if doc.kind == "research" else "page")
    )
    records = rispy.load(io.StringIO((await _export(doc, "ris")).decode()))
    assert [r["urls"][0] for r in records] == [s.url for s in sources]
    assert all(r["type_of_reference"] == "ELEC" for r in records)


@needs_chromium
async def test_pdf_keeps_text_page_numbers_and_clickable_citations() -> None:
    doc = research_doc()
    reader = PdfReader(io.BytesIO(await _export(doc, "pdf")))
    text = "\n".join(p.extract_text() for p in reader.pages)
    pages = len(reader.pages)
    assert f"Page 1 of {pages}" in text
    assert f"Page {pages} of {pages}" in text
    assert "Tides are caused by the moon" in text
    internal, uris = set(), set()
    for page in reader.pages:
        for annot in page.get("/Annots") or []:
            link = annot.get_object()
            if link.get("/Dest") is not None:
                internal.add(str(link["/Dest"]).lstrip("/"))
            elif link.get("/A") is not None:
                uris.add(str(link["/A"]["/URI"]))
    assert {doc.parts[0].anchor(n) for n in doc.parts[0].cited()} <= internal
    assert set(reader.named_destinations) >= {f"/src-{n}" for n in (1, 2, 3, 4)}
    web = {s.url for s in doc.parts[0].sources if s.url.startswith("http")}
    assert web <= uris
    assert not re.search(r"file://|/tmp/", text)  # no header or footer with the file's path


class _Hits(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Hits.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def listener() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@needs_chromium
async def test_chromium_reaches_no_network_even_for_html_that_asks(listener: int) -> None:
    # Raw HTML without our CSP: only the command line's flags stand between it and the network.
    base = f"http://127.0.0.1:{listener}"
    html = (
        f'<html><head><link rel="stylesheet" href="{base}/style.css"></head><body>'
        f'<img src="{base}/pixel.png"><iframe src="{base}/frame"></iframe>'
        f'<img src="http://localhost:{listener}/byname.png">hello</body></html>'
    )
    _Hits.hits.clear()
    pdf = await PdfRenderer(CHROMIUM, 120).render(html)
    assert pdf.startswith(b"%PDF")
    await asyncio.sleep(0.2)
    assert _Hits.hits == []


async def test_missing_chromium_is_a_clear_failure() -> None:
    with pytest.raises(PdfFailed, match="not installed"):
        await PdfRenderer("/nonexistent/chromium", 5).render("<p>x</p>")


def test_every_format_has_a_media_type_and_an_extension() -> None:
    assert set(FORMATS) == {"md", "html", "pdf", "json", "bibtex", "ris"}
    assert len({f.extension for f in FORMATS.values()}) == len(FORMATS)


def test_the_cli_picks_the_format_by_extension_as_the_server_names_them() -> None:
    assert cli_export.FORMAT_NAMES == render.FORMAT_NAMES
    assert cli_export.BY_EXTENSION == render.BY_EXTENSION
    assert cli_export.format_for("out/Report.PDF") == "pdf"
    assert cli_export.format_for("refs.bib") == "bibtex"
    assert cli_export.format_for("report.docx") is None
    assert cli_export.format_for("report.pdf", "ris") == "ris"
    assert cli_export.format_for(None) is None
