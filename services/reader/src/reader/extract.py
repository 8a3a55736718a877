"""Main-content extraction (pure, CPU-bound): HTML via Trafilatura, PDF via pypdf, text as is.

Runs inside the worker processes of :mod:`reader.pool`; nothing here does I/O.
"""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass
from typing import Any

import trafilatura
from pypdf import PdfReader

from reader.content import decode
from reader.metadata import page_metadata
from reader.model import Extracted, Kind
from reader.passes import combine

# Two Trafilatura passes, combined by reader.passes: favor_precision bounds the article,
# favor_recall fills it (headings, lists, code precision loses) and rescues pages it empties.
# Measured with bench/reader/bench_aeb.py (AEB F1 0.958 recall only -> 0.968) and
# bench/reader/eval_extraction.py (generated articles keep their headings and lists).
# Below this many characters of main text the passes are suspected of missing the content,
# and Trafilatura's baseline extractor (article/paragraph/JSON-LD articleBody text) is tried;
# its result is kept only if it is at least this long and twice as long as the first pass.
RECALL_MIN_CHARS = 200

# Blank-line runs left by PDF text extraction.
_BLANK_RUNS = re.compile(r"\n{3,}")
PAGE_BREAK = "\n\f\n"
# Trafilatura's markdown escapes characters that mean nothing mid-line ("Writer\\_Kim",
# "\\<The Palace>"); the escape splits words ("Writer_Kim" becomes "Writer" + "_Kim") for
# every reader of the text. Structural characters (#, *, -, +, |, `) keep their escapes.
_NEEDLESS_ESCAPE = re.compile(r"(?<!^)(?<!\\)\\([_~<>\[\]!(){}=])", re.MULTILINE)
# Underline has no markdown form, so Trafilatura writes it as inline HTML; on the web it marks
# links and emphasis, and the tag leaves a word "u" on either side of the text for every reader
# (the ranker's BM25, the embedder). <sup>/<sub> carry meaning (x², H₂O) and stay.
_UNDERLINE = re.compile(r"(?<!\\)</?u>")


@dataclass(frozen=True)
class Job:
    """One document to extract (picklable: sent to a worker process)."""

    body: bytes
    kind: Kind
    url: str = ""
    charset: str | None = None
    # PDF bounds: at most this many pages (0: all), stop after this many seconds (0: never).
    max_pages: int = 0
    time_limit_s: float = 0.0


def _markdown(tree: Any, url: str | None, *, precision: bool) -> str:
    # Comments off (they are not the page's content), tables and formatting kept as markdown.
    text = trafilatura.extract(
        tree,
        url=url,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_formatting=True,
        favor_precision=precision,
        favor_recall=not precision,
    )
    return _unescape((text or "").strip())


# Self-links inside headings (<h2><a href="#install">Installing</a></h2>, as blogs and
# documentation generators write them) make Trafilatura drop the heading as link-dense.
_HEADING_SELF_LINKS = "|".join(f"//h{n}//a[starts-with(@href, '#')]" for n in range(1, 7))


def _main_text(tree: Any, url: str | None) -> str:
    for link in tree.xpath(_HEADING_SELF_LINKS):
        link.drop_tag()  # keeps the text and the tail
    return combine(_markdown(tree, url, precision=True), _markdown(tree, url, precision=False))


def _unescape(markdown: str) -> str:
    """Drop needless backslash escapes and underline tags outside code fences."""
    lines, fenced = markdown.split("\n"), False
    for number, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines[number] = _NEEDLESS_ESCAPE.sub(r"\1", _UNDERLINE.sub("", line))
    return "\n".join(lines)


def _fallback(tree: Any, text: str) -> str:
    """Baseline text when the first pass found (almost) nothing and it finds clearly more."""
    _, base_text, base_len = trafilatura.baseline(tree)
    if base_len >= RECALL_MIN_CHARS and base_len >= 2 * len(text):
        return str(base_text).strip()
    return text


def extract_html(html: str, url: str | None = None) -> Extracted:
    """Extract title, markdown and metadata from an HTML document."""
    tree = trafilatura.load_html(html)
    if tree is None:
        return Extracted(markdown="")
    # Both extractors copy the tree they are given; metadata reads it last.
    text = _main_text(tree, url)
    if len(text) < RECALL_MIN_CHARS:
        text = _fallback(tree, text)
    meta = page_metadata(tree)
    return Extracted(
        markdown=text,
        title=meta.title,
        published=meta.published,
        site_name=meta.site_name,
        author=meta.author,
        language=meta.language,
    )


def extract_pdf(body: bytes, max_pages: int = 0, time_limit_s: float = 0.0) -> Extracted:
    """Extract the text layer of a PDF, page by page, and its title metadata.

    Hostile PDFs (thousands of pages, pages of millions of operators) are bounded: at most
    ``max_pages`` pages, and no page is started after ``time_limit_s``; what was extracted by
    then is kept (the pool's time limit still kills a single page that never ends).
    """
    end = time.monotonic() + time_limit_s if time_limit_s else None
    reader = PdfReader(io.BytesIO(body))
    pages: list[str] = []
    for number, page in enumerate(reader.pages):
        if (max_pages and number >= max_pages) or (end is not None and time.monotonic() > end):
            break
        pages.append(_BLANK_RUNS.sub("\n\n", (page.extract_text() or "").strip()))
    # Pages are joined by a form feed, empty ones kept, so the index can tell which page a
    # passage comes from (cited as "p. N"); a form feed is whitespace to every tokenizer.
    text = PAGE_BREAK.join(pages).strip("\n ") if any(pages) else ""
    meta = reader.metadata
    title = str(meta.title or "") if meta is not None else ""
    author = str(meta.author or "") if meta is not None else ""
    return Extracted(
        markdown=text, title=title.strip(), author=author.strip(), published=_pdf_date(meta)
    )


def _pdf_date(meta: Any) -> str:
    """The PDF's creation date as YYYY-MM-DD, if it has a readable one."""
    try:
        created = meta.creation_date if meta is not None else None
    except ValueError:  # malformed D:YYYYMMDD... strings are common
        return ""
    return created.date().isoformat() if created is not None else ""


def extract(job: Job) -> Extracted:
    """Extract one document according to its kind."""
    if job.kind is Kind.PDF:
        return extract_pdf(job.body, job.max_pages, job.time_limit_s)
    text = decode(job.body, job.charset)
    if job.kind is Kind.TEXT:
        return Extracted(markdown=text.strip())
    return extract_html(text, job.url or None)
