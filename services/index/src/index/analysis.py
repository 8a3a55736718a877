"""Chunk a document and count its terms per chunk, with the shared analyser; pure.

A document is analysed once, when it is staged: a commit then only maps terms to ids and
merges postings, so committing a few changed files into a large corpus stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
from quarry_text.analyzer import Analyzer
from quarry_text.chunking import Page, chunk_page
from quarry_text.termcounts import term_frequencies

from index.types import Document, DocumentInfo

Ints = npt.NDArray[np.int32]
# How the reader separates a PDF's pages in the text it extracts.
PAGE_BREAK = "\f"


def now_iso() -> str:
    """The current time as ISO 8601 UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True, eq=False)
class Prepared:
    """A document's listing entry, its texts as UTF-8 (what the index stores: the ``str``
    forms are dropped after analysis, which halves a large staging's memory) and, per
    chunk, its distinct terms and their counts.

    ``chunk_text`` is every chunk back to back, ``chunk_sizes`` their byte lengths;
    ``terms[i]`` occurs ``tfs[i]`` times in chunk ``term_chunk[i]`` (0-based within the
    document); ``lengths`` count every token of a chunk, stop-words too, as RankChunks does.
    """

    info: DocumentInfo
    markdown: bytes
    chunk_text: bytes
    chunk_sizes: Ints
    lengths: Ints
    terms: tuple[str, ...]
    term_chunk: Ints
    tfs: Ints

    @property
    def n_chunks(self) -> int:
        """Chunks of the document."""
        return len(self.lengths)


def titled(document: Document) -> str:
    """The text to index: the markdown, led by the title as a heading unless the markdown
    already opens with it, so a search for words of a title (often the file name) finds
    the document even when its text never repeats them."""
    title = " ".join(document.title.split())
    words = " ".join(Analyzer.surface_tokens(title))
    head = " ".join(Analyzer.surface_tokens(document.markdown[: 2 * len(title) + 200]))
    if not words or f" {words} " in f" {head} ":
        return document.markdown
    return f"# {title}\n\n{document.markdown}"


def chunks_of(document: Document, chunk_words: int) -> tuple[list[str], tuple[int, ...]]:
    """``document``'s passages (with its title, see :func:`titled`) as RankChunks chunks a
    page, and for a PDF whose text marks its page breaks (the reader joins pages with a form
    feed) the chunk each page starts at: a passage never spans two pages, so it can be cited
    by its page."""
    text = titled(document)
    if document.kind != "pdf" or PAGE_BREAK not in text:
        page = Page(url=document.id, title=document.title, markdown=text)
        return [c.text for c in chunk_page(page, chunk_words)], ()
    chunks: list[str] = []
    starts: list[int] = []
    for body in text.split(PAGE_BREAK):
        starts.append(len(chunks))
        page = Page(url=document.id, title=document.title, markdown=body)
        chunks += [c.text for c in chunk_page(page, chunk_words)]
    return chunks, tuple(starts)


def prepare(analyzer: Analyzer, document: Document, chunk_words: int) -> Prepared:
    """Chunk ``document`` (see :func:`chunks_of`) and count each chunk's terms."""
    chunks, page_starts = chunks_of(document, chunk_words)
    lengths = np.zeros(len(chunks), np.int32)
    terms: list[str] = []
    term_chunk: list[int] = []
    tfs: list[int] = []
    for i, text in enumerate(chunks):
        counts, lengths[i] = term_frequencies(analyzer, text)
        terms += counts
        tfs += counts.values()
        term_chunk += [i] * len(counts)
    encoded = [c.encode() for c in chunks]
    d = document
    return Prepared(
        info=DocumentInfo(
            d.id,
            d.content_hash,
            d.size,
            d.mtime_ns,
            d.title,
            d.kind,
            len(chunks),
            indexed_at=now_iso(),
            page_starts=page_starts,
        ),
        markdown=d.markdown.encode(),
        chunk_text=b"".join(encoded),
        chunk_sizes=np.fromiter(map(len, encoded), np.int32, len(encoded)),
        lengths=lengths,
        terms=tuple(terms),
        term_chunk=np.asarray(term_chunk, np.int32),
        tfs=np.asarray(tfs, np.int32),
    )
