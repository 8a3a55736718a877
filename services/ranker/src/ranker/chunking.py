"""Split page markdown into ~N-word chunks and drop near-duplicate chunks; pure.

"Words" are the analyser's surface tokens (:meth:`Analyzer.surface_tokens`): chunking
tokenises each paragraph once to count it, and hands those tokens on with the chunk, so
ranking never tokenises the text a second time (that was ~20 % of a RankChunks call).
Tokens never span whitespace, so a chunk's tokens are the concatenation of its parts'.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from ranker.analyzer import Analyzer
from ranker.model import Chunk, Page

DEFAULT_CHUNK_WORDS = 500

Tokenize = Callable[[str], list[str]]
Piece = tuple[str, list[str]]  # text and its tokens

# A blank line: a newline, optional spaces/tabs, then one or more further newlines.
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
# An ATX heading line ("# Title" ... "###### Title"), after up to 3 spaces of indent.
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
# Whitespace after a sentence end (. ! ? or … optionally followed by a closing quote or
# bracket) and before the next non-space character.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"')\]»”\u2019]))\s+(?=\S)")


def _is_heading(block: str) -> bool:
    """True when every line of ``block`` is an ATX heading."""
    # Most blocks are prose: rule them out without a regex.
    if "#" not in block[:4]:
        return False
    return all(_HEADING.match(line) for line in block.splitlines())


def _split_words(sentence: str, limit: int, tokenize: Tokenize) -> Iterator[Piece]:
    """Split an over-long sentence at whitespace into pieces of at most ``limit`` tokens."""
    words: list[str] = []
    tokens: list[str] = []
    for word in sentence.split():
        word_tokens = tokenize(word)
        if words and len(tokens) + len(word_tokens) > limit:
            yield " ".join(words), tokens
            words, tokens = [], []
        words.append(word)
        tokens += word_tokens
    if words:
        yield " ".join(words), tokens


def _split_long(body: str, limit: int, first_limit: int, tokenize: Tokenize) -> Iterator[Piece]:
    """Split a long paragraph at sentence boundaries, then at word boundaries."""
    texts: list[str] = []
    tokens: list[str] = []
    budget = first_limit
    for sentence in _SENTENCE_END.split(body):
        sentence_tokens = tokenize(sentence)
        if texts and len(tokens) + len(sentence_tokens) > budget:
            yield " ".join(texts), tokens
            texts, tokens, budget = [], [], limit
        if len(sentence_tokens) > budget:
            pieces = list(_split_words(sentence, budget, tokenize))
            yield from pieces[:-1]
            budget = limit
            sentence, sentence_tokens = pieces[-1]
        texts.append(sentence)
        tokens += sentence_tokens
    if texts:
        yield " ".join(texts), tokens


def _pieces(markdown: str, limit: int, tokenize: Tokenize) -> Iterator[Piece]:
    """Yield pieces of at most ``limit`` tokens, headings glued to the text they introduce
    (a heading may tip a piece over by its own tokens)."""
    heading = ""
    heading_tokens: list[str] = []
    for raw in _PARAGRAPH_BREAK.split(markdown):
        block = raw.strip()
        if not block:
            continue
        if _is_heading(block):
            heading = f"{heading}\n\n{block}" if heading else block
            heading_tokens = heading_tokens + tokenize(block)
            continue
        tokens = tokenize(block)
        if len(heading_tokens) + len(tokens) <= limit:
            yield (f"{heading}\n\n{block}" if heading else block), heading_tokens + tokens
        else:
            first_limit = max(1, limit - len(heading_tokens))
            for i, (text, piece_tokens) in enumerate(
                _split_long(block, limit, first_limit, tokenize)
            ):
                if i == 0 and heading:
                    yield f"{heading}\n\n{text}", heading_tokens + piece_tokens
                else:
                    yield text, piece_tokens
        heading, heading_tokens = "", []
    if heading:  # headings with no text after them: still text of the page
        yield heading, heading_tokens


def chunk_page_tokens(
    page: Page, chunk_words: int = DEFAULT_CHUNK_WORDS, tokenize: Tokenize | None = None
) -> list[tuple[Chunk, list[str]]]:
    """Pack a page's paragraphs greedily into chunks of about ``chunk_words`` tokens.

    Paragraphs are blank-line separated blocks; a heading block travels with the paragraph
    after it; paragraphs longer than the target are split at sentence, then word
    boundaries. Every chunk carries the page's url and title, and comes with its tokens.
    """
    if chunk_words < 1:
        raise ValueError("chunk_words must be >= 1")
    tokenize = tokenize or Analyzer.surface_tokens
    packed: list[Piece] = []
    texts: list[str] = []
    tokens: list[str] = []
    for text, piece_tokens in _pieces(page.markdown, chunk_words, tokenize):
        if texts and len(tokens) + len(piece_tokens) > chunk_words:
            packed.append(("\n\n".join(texts), tokens))
            texts, tokens = [], []
        texts.append(text)
        tokens += piece_tokens
    if texts:
        packed.append(("\n\n".join(texts), tokens))
    return [(Chunk(page.url, page.title, text, i), toks) for i, (text, toks) in enumerate(packed)]


def chunk_page(page: Page, chunk_words: int = DEFAULT_CHUNK_WORDS) -> list[Chunk]:
    """The chunks of :func:`chunk_page_tokens`, without their tokens."""
    return [chunk for chunk, _ in chunk_page_tokens(page, chunk_words)]


def chunk_pages(pages: Sequence[Page], chunk_words: int = DEFAULT_CHUNK_WORDS) -> list[Chunk]:
    """Chunk every page, in page order, without near-duplicate removal."""
    return [chunk for page in pages for chunk in chunk_page(page, chunk_words)]


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
