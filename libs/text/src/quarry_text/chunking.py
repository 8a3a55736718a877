"""Split page markdown into ~N-word chunks and drop near-duplicate chunks; pure."""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass

from quarry_text import structure
from quarry_text.analyzer import Analyzer
from quarry_text.structure import Unit

DEFAULT_CHUNK_WORDS = 500
# Bumped whenever a page's chunks change (2: structural units, quarry_text.structure), so a
# stored index cut by another version can be told apart (the index records it in its manifest);
# 3: a block that fits stays whole, an entry's head leads its text (two-line terms).
CHUNKER_VERSION = 3


@dataclass(frozen=True, slots=True)
class Page:
    """A page (or a local document) as markdown."""

    url: str
    title: str
    markdown: str


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage of a page; ``index`` is its 0-based position within the page."""

    url: str
    title: str
    text: str
    index: int


Piece = tuple[str, int]  # text and its word count

# A blank line: a newline, optional spaces/tabs, then one or more further newlines.
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
# An ATX heading line ("# Title" ... "###### Title"), after up to 3 spaces of indent.
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
# Whitespace after a sentence end (. ! ? or … optionally followed by a closing quote or
# bracket) and before the next non-space character.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"')\]»”\u2019]))\s+(?=\S)")


def count_words(text: str) -> int:
    """About the words of stripped ``text``, never fewer than ``len(text.split())``.

    ASCII text counts its spaces, newlines and tabs without splitting (runs of spaces make
    it err high, i.e. chunks a little small); other text also counts analyser tokens,
    since CJK writes whole sentences without spaces.
    """
    if text.isascii():
        return text.count(" ") + text.count("\n") + text.count("\t") + 1
    return max(len(text.split()), len(Analyzer.surface_tokens(text)))


def _is_heading(block: str) -> bool:
    """True when every line of ``block`` (stripped) is an ATX heading."""
    # Most blocks are prose: rule them out without a regex.
    return block[:1] == "#" and all(_HEADING.match(line) for line in block.splitlines())


def _split_words(sentence: str, limit: int) -> Iterator[Piece]:
    """Split an over-long sentence at whitespace (a longer single word: at characters)."""
    words: list[str] = []
    count = 0
    for word in sentence.split():
        n = count_words(word)
        if n > limit:  # e.g. a CJK run with no spaces
            parts = [word[i : i + limit] for i in range(0, len(word), limit)]
            word, n = parts[-1], count_words(parts[-1])
            if words:
                yield " ".join(words), count
            yield from ((p, count_words(p)) for p in parts[:-1])
            words, count = [], 0
        elif words and count + n > limit:
            yield " ".join(words), count
            words, count = [], 0
        words.append(word)
        count += n
    if words:
        yield " ".join(words), count


def _split_long(body: str, limit: int, first_limit: int) -> Iterator[Piece]:
    """Split a long paragraph at sentence boundaries, then at word boundaries."""
    texts: list[str] = []
    count = 0
    budget = first_limit
    for sentence in _SENTENCE_END.split(body):
        n = count_words(sentence)
        if texts and count + n > budget:
            yield " ".join(texts), count
            texts, count, budget = [], 0, limit
        if n > budget:
            pieces = list(_split_words(sentence, budget))
            yield from pieces[:-1]
            budget = limit
            sentence, n = pieces[-1]
        texts.append(sentence)
        count += n
    if texts:
        yield " ".join(texts), count


def _unit_pieces(unit: Unit, limit: int, first_limit: int) -> Iterator[Piece]:
    """A unit too long for one piece, split at sentences, then words; every piece after the
    first repeats the unit's label (an option's name, a table's header), so it still names
    what it describes."""
    label, n_label = unit.label, count_words(unit.label) if unit.label else 0
    body = unit.text
    if not label or n_label > limit // 2 or not body.startswith(label):
        yield from _split_long(body, limit, first_limit)
        return
    rest = body[len(label) :].strip()
    for text, n in _split_long(rest, limit - n_label, max(1, first_limit - n_label)):
        yield f"{label}\n{text}", n_label + n


def _pieces(markdown: str, limit: int) -> Iterator[Piece]:
    """Yield pieces of at most ``limit`` words, headings glued to the text they introduce
    (a heading may tip a piece over by its own words); a block's structural units (list
    entries, table rows: :mod:`quarry_text.structure`) are never split unless one alone is too
    long."""
    heading = ""
    n_heading = 0
    for raw in _PARAGRAPH_BREAK.split(markdown):
        block = raw.strip()
        if not block:
            continue
        if _is_heading(block):
            heading = f"{heading}\n\n{block}" if heading else block
            n_heading += count_words(block)
            continue
        # A block that fits stays whole: units only choose where a long block is cut (cut
        # at every unit, a short list or a directive's table and text were split across
        # passages by the packer wherever the previous passage ran out).
        if n_heading + count_words(block) <= limit:
            parts = [Unit(block)]
        else:
            parts = structure.units(block, limit)
        for k, unit in enumerate(parts):
            n = count_words(unit.text)
            if k + 1 < len(parts) and structure.is_head(unit.text) and n_heading + n <= limit:
                # An entry's head (a term left on its own, a title) leads the text after it,
                # as a heading does: packed alone it ended the passage before its text
                # (Postfix's "name (default: value)" away from its description).
                heading = f"{heading}\n{unit.text}" if heading else unit.text
                n_heading += n
                continue
            if n_heading + n <= limit:
                yield (f"{heading}\n\n{unit.text}" if heading else unit.text), n_heading + n
            else:
                first_limit = max(1, limit - n_heading)
                for i, (text, n_piece) in enumerate(_unit_pieces(unit, limit, first_limit)):
                    if i == 0 and heading:
                        yield f"{heading}\n\n{text}", n_heading + n_piece
                    else:
                        yield text, n_piece
            heading, n_heading = "", 0
    if heading:  # headings with no text after them: still text of the page
        yield heading, n_heading


def chunk_page(page: Page, chunk_words: int = DEFAULT_CHUNK_WORDS) -> list[Chunk]:
    """Pack a page's paragraphs greedily into chunks of about ``chunk_words`` words.

    Paragraphs are blank-line separated blocks; a heading block travels with the paragraph
    after it; paragraphs longer than the target are split at sentence, then word
    boundaries. Every chunk carries the page's url and title.
    """
    if chunk_words < 1:
        raise ValueError("chunk_words must be >= 1")
    packed: list[str] = []
    texts: list[str] = []
    count = 0
    for text, n in _pieces(page.markdown, chunk_words):
        if texts and count + n > chunk_words:
            packed.append("\n\n".join(texts))
            texts, count = [], 0
        texts.append(text)
        count += n
    if texts:
        packed.append("\n\n".join(texts))
    return [Chunk(page.url, page.title, text, i) for i, text in enumerate(packed)]


def chunk_pages(pages: Sequence[Page], chunk_words: int = DEFAULT_CHUNK_WORDS) -> list[Chunk]:
    """Chunk every page, in page order, without near-duplicate removal."""
    return [chunk for page in pages for chunk in chunk_page(page, chunk_words)]


def near_duplicate_key(text: str) -> str:
    """Key equal for passages whose surface tokens are equal (case, markup, punctuation and
    spacing ignored), e.g. the same article syndicated on several sites."""
    return " ".join(Analyzer.surface_tokens(text))


def dedupe_chunks(chunks: Sequence[Chunk], keys: Sequence[Hashable] | None = None) -> list[int]:
    """Indices of the chunks to keep: the first of each near-duplicate group, in order.

    ``keys`` are the chunks' near-duplicate keys when the caller already has them.
    """
    if keys is None:
        keys = [near_duplicate_key(c.text) for c in chunks]
    seen: set[Hashable] = set()
    kept: list[int] = []
    for i, key in enumerate(keys):
        if key not in seen:
            seen.add(key)
            kept.append(i)
    return kept
