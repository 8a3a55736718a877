"""Split page markdown into ~N-word chunks and drop near-duplicate chunks; pure."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ranker.analyzer import Analyzer
from ranker.model import Chunk, Page

DEFAULT_CHUNK_WORDS = 500

# A blank line: a newline, optional spaces/tabs, then one or more further newlines.
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
# An ATX heading line ("# Title" ... "###### Title"), after up to 3 spaces of indent.
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
# Whitespace after a sentence end (. ! ? or … optionally followed by a closing quote or
# bracket) and before the next non-space character.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"')\]»”\u2019]))\s+(?=\S)")


def _is_heading(block: str) -> bool:
    """True when every line of ``block`` is an ATX heading."""
    return all(_HEADING.match(line) for line in block.splitlines())


def _units(markdown: str) -> Iterator[tuple[str, str]]:
    """Yield (heading prefix, body) units: headings glued to the paragraph they introduce."""
    heading: list[str] = []
    for raw in _PARAGRAPH_BREAK.split(markdown):
        block = raw.strip()
        if not block:
            continue
        if _is_heading(block):
            heading.append(block)
            continue
        yield "\n\n".join(heading), block
        heading = []
    if heading:
        yield "", "\n\n".join(heading)


def _split_words(text: str, limit: int) -> Iterator[str]:
    """Split ``text`` into pieces of at most ``limit`` words."""
    words = text.split()
    for start in range(0, len(words), limit):
        yield " ".join(words[start : start + limit])


def _split_long(body: str, limit: int, first_limit: int) -> Iterator[str]:
    """Split a long paragraph at sentence boundaries, then at word boundaries."""
    current: list[str] = []
    count = 0
    budget = first_limit
    for sentence in _SENTENCE_END.split(body):
        n = len(sentence.split())
        if current and count + n > budget:
            yield " ".join(current)
            current, count, budget = [], 0, limit
        if n > budget:
            pieces = list(_split_words(sentence, budget))
            yield from pieces[:-1]
            budget = limit
            sentence = pieces[-1]
            n = len(sentence.split())
        current.append(sentence)
        count += n
    if current:
        yield " ".join(current)


def _pieces(markdown: str, limit: int) -> Iterator[tuple[str, int]]:
    """Yield (text, words) pieces of at most ``limit`` words (a heading may tip it over)."""
    for heading, body in _units(markdown):
        n_heading = len(heading.split())
        n_body = len(body.split())
        if n_heading + n_body <= limit:
            text = f"{heading}\n\n{body}" if heading else body
            yield text, n_heading + n_body
            continue
        first = True
        for piece in _split_long(body, limit, max(1, limit - n_heading)):
            n = len(piece.split())
            if first and heading:
                yield f"{heading}\n\n{piece}", n + n_heading
            else:
                yield piece, n
            first = False


def chunk_page(page: Page, chunk_words: int = DEFAULT_CHUNK_WORDS) -> list[Chunk]:
    """Pack a page's paragraphs greedily into chunks of about ``chunk_words`` words.

    Paragraphs are blank-line separated blocks; a heading block travels with the paragraph
    after it; paragraphs longer than the target are split at sentence, then word
    boundaries. Every chunk carries the page's url and title.
    """
    if chunk_words < 1:
        raise ValueError("chunk_words must be >= 1")
    texts: list[str] = []
    current: list[str] = []
    count = 0
    for text, n in _pieces(page.markdown, chunk_words):
        if current and count + n > chunk_words:
            texts.append("\n\n".join(current))
            current, count = [], 0
        current.append(text)
        count += n
    if current:
        texts.append("\n\n".join(current))
    return [Chunk(page.url, page.title, text, i) for i, text in enumerate(texts)]


def near_duplicate_key(tokens: Sequence[str]) -> str:
    """Key equal for passages whose surface tokens are equal (case, markup, punctuation and
    spacing ignored), e.g. the same article syndicated on several sites."""
    return " ".join(tokens)


def dedupe_chunks(
    chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]] | None = None
) -> list[int]:
    """Indices of the chunks to keep: the first of each near-duplicate group, in order.

    ``tokens`` are the chunks' surface tokens when the caller already has them.
    """
    if tokens is None:
        tokens = [Analyzer.surface_tokens(c.text) for c in chunks]
    seen: set[str] = set()
    kept: list[int] = []
    for i, toks in enumerate(tokens):
        key = near_duplicate_key(toks)
        if key not in seen:
            seen.add(key)
            kept.append(i)
    return kept


def chunk_pages(pages: Sequence[Page], chunk_words: int = DEFAULT_CHUNK_WORDS) -> list[Chunk]:
    """Chunk every page, in page order, without near-duplicate removal."""
    return [chunk for page in pages for chunk in chunk_page(page, chunk_words)]
