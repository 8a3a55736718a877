"""Extraction in-process (the same functions the workers run)."""

from __future__ import annotations

from reader.extract import RECALL_MIN_CHARS, Job, extract, extract_html
from reader.model import Kind

from services.reader.tests.pages import (
    ARTICLE,
    JS_SHELL,
    PARAGRAPHS,
    PDF_LINES,
    REFERENCE,
    REFERENCE_FACTS,
    STRUCTURED,
    STRUCTURED_PARAGRAPHS,
    make_pdf,
)


def test_article_markdown_and_metadata() -> None:
    doc = extract(Job(ARTICLE, Kind.HTML, "https://history.example/veldmark"))
    assert doc.title == "The Veldmark breakwater"  # site suffix dropped by Trafilatura
    assert doc.markdown.startswith("# The Veldmark breakwater")
    assert all(p[:50] in doc.markdown for p in PARAGRAPHS)
    assert "| Year | Event |" in doc.markdown
    assert "About us" not in doc.markdown
    assert "---" not in doc.markdown.splitlines()[0]  # metadata header stripped
    assert (doc.language, doc.site_name, doc.published) == ("en", "Coastal History", "2021-03-04")


def test_markdown_structure_survives_the_precision_pass() -> None:
    # Trafilatura's precision pass alone drops every list here and both self-linked headings.
    lines = [line.rstrip() for line in extract_html(STRUCTURED).markdown.splitlines()]
    for expected in (
        "- Readings every six minutes since 1893.",  # the lead list
        "## Installing the logger",
        "1. Unpack the logger and charge its battery overnight.",
        "## Reading the archive",
        "```",
        "wc -l levels.csv",
        "| level | Water level in millimetres |",
        "- Corrections are stored beside the reading they amend.",  # the closing list
        *STRUCTURED_PARAGRAPHS,
    ):
        assert expected in lines, expected
    order = [lines.index(x) for x in ("## Installing the logger", "## Reading the archive")]
    assert order[0] < lines.index(STRUCTURED_PARAGRAPHS[1]) < order[1]
    text = "\n".join(lines)
    assert "Related articles" not in text
    assert "Ten harbour walks" not in text
    assert "Copyright" not in text


def test_a_reference_page_keeps_its_definition_list() -> None:
    markdown = extract_html(REFERENCE).markdown
    assert "## Invocation modes" in markdown
    for fact in REFERENCE_FACTS:  # the precision pass alone drops the second
        assert fact in markdown
    assert "use FCGI;" in markdown


def test_underline_tags_are_dropped() -> None:
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS[1:])
    page = f"<html><body><article><p>The <u>breakwater</u> stands.</p>{body}</article></body>"
    markdown = extract_html(page).markdown
    assert "The breakwater stands." in markdown
    assert "<u>" not in markdown


def test_js_shell_has_no_content() -> None:
    doc = extract(Job(JS_SHELL, Kind.HTML))
    assert doc.markdown == ""
    assert doc.title == "App"


def test_short_list_page_gets_the_recall_pass() -> None:
    # A link-list page: the balanced pass drops the list as navigation-like.
    items = "".join(f"<li>Step {i}: tighten bolt {i} to 12 Nm.</li>" for i in range(1, 9))
    html = f"<html><body><div><h2>Assembly</h2><ul>{items}</ul></div></body></html>"
    doc = extract_html(html)
    assert "Step 8: tighten bolt 8 to 12 Nm." in doc.markdown
    assert len(doc.markdown) >= RECALL_MIN_CHARS


def test_language_from_meta_when_html_has_none() -> None:
    html = (
        "<html><head><meta http-equiv='Content-Language' content='de-DE'></head><body>"
        "<article><p>" + "Ein Absatz mit genug Text für den Extraktor. " * 10 + "</p></article>"
        "</body></html>"
    )
    assert extract_html(html).language == "de-DE"


def test_pdf_text_and_title() -> None:
    doc = extract(Job(make_pdf(PDF_LINES, title="Tides"), Kind.PDF))
    assert doc.title == "Tides"
    assert doc.published == "2024-03-05"
    assert doc.markdown.splitlines() == PDF_LINES


def test_plain_text_passes_through_decoded() -> None:
    doc = extract(Job("  naïve notes\n".encode("cp1252"), Kind.TEXT, charset="windows-1252"))
    assert doc.markdown == "naïve notes"


def test_xhtml_with_xml_declaration_and_xml_lang() -> None:
    text = "Café crème et encore quelques mots pour la longueur du paragraphe. " * 8
    page = (
        '<?xml version="1.0" encoding="iso-8859-1"?><html xmlns="http://www.w3.org/1999/xhtml" '
        f'xml:lang="fr"><head><title>Carte</title></head><body><div><p>{text}</p></div></body>'
        "</html>"
    ).encode("latin-1")
    doc = extract(Job(page, Kind.HTML, charset="iso-8859-1"))
    assert doc.markdown.startswith("Café crème")
    assert doc.language == "fr"
    assert doc.title == "Carte"


def test_needless_markdown_escapes_are_dropped_but_structural_ones_kept() -> None:
    from reader.extract import _unescape

    text = "Writer\\_Kim saw \\<The Palace> \\~ 2018\n\\- not a list\n```\na\\_b\n```\n| a \\| b |"
    assert _unescape(text) == (
        "Writer_Kim saw <The Palace> ~ 2018\n\\- not a list\n```\na\\_b\n```\n| a \\| b |"
    )
