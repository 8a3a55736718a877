"""A self-contained HTML file of a document: styles inline, citations as links to the source
appendix, each source's quoted passages there, print CSS (page numbers) for the PDF.

Sanitised twice over. The Markdown is rendered by markdown-it-py with raw HTML off (a ``<script>``
in an answer or a page title comes out as text), then cleaned by nh3 (the Rust ammonia
sanitiser: a tag and attribute allow-list, only http/https/mailto links, ``rel=noopener``);
bleach, the older choice, is deprecated. Everything else on the page (titles, URLs, passages) is
escaped with ``html.escape``. A Content-Security-Policy meta tag forbids every fetch, so the
file loads nothing when opened — and neither does the Chromium that prints it. Pure: no I/O.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import escape
from urllib.parse import urlsplit

import nh3
from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin

from orchestrator.core.exports.document import CITATION, Document, Part, Source
from orchestrator.core.research.synthesis import slug

_TAGS = {
    "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
    "pre", "code", "em", "strong", "del", "table", "thead", "tbody", "tr", "th", "td", "sup",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "id"},
    "h1": {"id"},
    "h2": {"id"},
    "h3": {"id"},
    "h4": {"id"},
    "th": {"style"},
    "td": {"style"},
}
_SCHEMES = {"http", "https", "mailto"}
# Nothing may be fetched: no scripts, images, fonts or frames; the inline styles only.
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
  max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; line-height: 1.25; } h2 { font-size: 1.25rem; margin-top: 2rem; }
h3 { font-size: 1.05rem; } a { color: #0b57d0; } a.cite { text-decoration: none; }
blockquote { margin: .5rem 0; padding: .25rem .75rem; border-left: 3px solid #c7c7cc;
  color: #3a3a3c; background: #f5f5f7; }
pre, code { font-family: ui-monospace, monospace; font-size: .9em; }
pre { white-space: pre-wrap; background: #f5f5f7; padding: .5rem; }
table { border-collapse: collapse; } th, td { border: 1px solid #d2d2d7; padding: .25rem .5rem; }
.meta { color: #6e6e73; font-size: .85rem; } .origin { color: #6e6e73; font-size: .8rem; }
.sources li { margin-bottom: .75rem; word-break: break-word; }
.turn { border-top: 1px solid #d2d2d7; margin-top: 2rem; }
@page { size: A4; margin: 18mm 16mm 20mm;
  @bottom-right { content: "Page " counter(page) " of " counter(pages);
    font: 9pt system-ui, sans-serif; color: #6e6e73; } }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 11pt; }
  a { color: inherit; } a.cite { color: #0b57d0; }
  h1, h2, h3 { break-after: avoid; } blockquote, li { break-inside: avoid; }
  .sources { break-before: page; }
}
"""


def _markdown() -> MarkdownIt:
    # "commonmark" with raw HTML off; tables and strikethrough on; heading ids as GitHub makes
    # them (the report's Contents links to them).
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.enable(["table", "strikethrough"])
    return md.use(anchors_plugin, max_level=4, slug_func=slug)


def _link_citations(part: Part) -> str:
    """The part's Markdown with each resolvable ``[n]`` a link to the source's anchor."""

    def link(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if part.source(n) is None:
            return match.group(0)
        return f"[\\[{n}\\]](#{part.anchor(n)})"

    return CITATION.sub(link, part.body)


def _mark_citations(html: str, part: Part) -> str:
    # After nh3 (which keeps no class it was not given): the citation links we made.
    target = f'<a href="#{part.prefix}src-'
    return html.replace(target, target.replace("<a ", '<a class="cite" '))


def render_markdown(md: MarkdownIt, text: str) -> str:
    """Markdown to sanitised HTML."""
    return nh3.clean(
        str(md.render(text)),
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer",
    )


def _href(url: str) -> str | None:
    return url if urlsplit(url).scheme in ("http", "https") else None


def _source_item(part: Part, src: Source) -> str:
    title = escape(src.title or src.url)
    href = _href(src.url)
    head = f'<a href="{escape(href)}">{title}</a>' if href else f"<strong>{title}</strong>"
    quotes = "".join(f"<blockquote>{escape(p)}</blockquote>" for p in src.passages)
    return (
        f'<li id="{part.anchor(src.n)}" value="{src.n}">{head} '
        f'<span class="origin">({escape(src.origin)})</span><br>'
        f'<span class="meta">{escape(src.url)}</span>{quotes}</li>'
    )


def _sources(part: Part, heading: str, anchor: str) -> str:
    if not part.sources:
        return ""
    items = "".join(_source_item(part, s) for s in part.sources)
    return f'<section class="sources"><h2 id="{anchor}">{heading}</h2><ol>{items}</ol></section>'


def _part(md: MarkdownIt, part: Part, doc: Document) -> str:
    body = _mark_citations(render_markdown(md, _link_citations(part)), part)
    if doc.kind == "research":
        return body + _sources(part, "Sources", "sources")
    heading = f"<h2>{escape(part.heading)}</h2>" if part.heading else ""
    sources = _sources(part, "Sources of this answer", f"{part.prefix}sources")
    return f'<section class="turn">{heading}{body}{sources}</section>'


def to_html(doc: Document) -> str:
    """The whole document as one HTML file."""
    md = _markdown()
    when = datetime.fromtimestamp(doc.created_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    heading = "" if doc.kind == "research" else f"<h1>{escape(doc.title)}</h1>"
    parts = "".join(_part(md, p, doc) for p in doc.parts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="Quarry"><title>{escape(doc.title)}</title>'
        f"<style>{STYLE}</style></head><body>{heading}"
        f'<p class="meta">Quarry {escape(doc.kind)} · {when} · {escape(doc.status)}</p>'
        f"{parts}</body></html>\n"
    )
