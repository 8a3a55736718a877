"""Query-dependent snippets: the window of a chunk that shows the most query terms; pure."""

from __future__ import annotations

import re
from collections.abc import Collection

from quarry_text.analyzer import CJK_CHARS, TOKEN_RE, Analyzer
from quarry_text.termcounts import surface_prefix

# A character of a non-CJK token (a letter or digit): CJK characters are tokens alone.
_TOKEN_CHAR = re.compile(rf"[^\W_{CJK_CHARS}]")
SNIPPET_CHARS = 300
# Context kept before the first matched word of the window.
LEAD_CHARS = 60
# Matches considered as window anchors: enough for any chunk a person reads.
MAX_ANCHORS = 200
ELLIPSIS = "…"
# Markdown markup that reads as noise in a one-line snippet: heading marks at a line start,
# emphasis runs (**, __) and code fences.
_MARKUP = re.compile(r"(?m)^ {0,3}#{1,6}[ \t]+|\*\*|__|```+")


def _token_matches(analyzer: Analyzer, text: str, terms: Collection[str]) -> list[tuple[int, str]]:
    """:func:`_matches` token by token (text whose lowercase has another length)."""
    tokens = [(m.start(), m.group().lower()) for m in TOKEN_RE.finditer(text)]
    forms = {form for _, form in tokens if not analyzer.is_stopword(form)}
    stems = analyzer.stems(forms)
    return [(pos, stems[form]) for pos, form in tokens if stems.get(form) in terms]


def _ascii_matches(
    analyzer: Analyzer, lowered: str, terms: Collection[str]
) -> list[tuple[int, str]]:
    """:func:`_matches` for ASCII text: only tokens starting with a query term's surface
    prefix can match (as in :mod:`quarry_text.termcounts`), so only those are looked at."""
    prefixes = {surface_prefix(t) for t in terms if t.isascii()}
    if not prefixes:
        return []
    alternation = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    found = [
        (m.start(), m.group())
        for m in re.finditer(rf"(?<![0-9a-z])(?:{alternation})[0-9a-z]*", lowered)
    ]
    forms = {f for _, f in found if not analyzer.is_stopword(f)}
    stems = analyzer.stems(forms)
    return [(pos, stems[f]) for pos, f in found if stems.get(f) in terms]


def _is_token_char(ch: str) -> bool:
    return bool(_TOKEN_CHAR.match(ch))


def _matches(analyzer: Analyzer, text: str, terms: Collection[str]) -> list[tuple[int, str]]:
    """Start offset and term of every token of ``text`` that analyses to one of ``terms``.

    Only the distinct forms are analysed; then one regex finds the matching forms' places
    (a Python object per token was most of a search's time).
    """
    lowered = text.lower()
    if lowered.isascii():
        return _ascii_matches(analyzer, lowered, terms)
    if len(lowered) != len(text):  # offsets would shift (e.g. "İ" lowercases to 2 chars)
        return _token_matches(analyzer, text, terms)
    forms = {f for f in set(TOKEN_RE.findall(lowered)) if not analyzer.is_stopword(f)}
    hits = {f: s for f, s in analyzer.stems(forms).items() if s in terms}
    if not hits:
        return []
    alternation = "|".join(re.escape(f) for f in sorted(hits, key=len, reverse=True))
    out = []
    for m in re.finditer(alternation, lowered):
        start, end = m.span()
        whole = len(m.group()) == 1 and not _is_token_char(m.group())  # one CJK character
        if whole or (
            (start == 0 or not _is_token_char(lowered[start - 1]))
            and (end == len(lowered) or not _is_token_char(lowered[end]))
        ):
            out.append((start, hits[m.group()]))
    return out


def _best_anchor(matches: list[tuple[int, str]], width: int) -> int:
    """Offset of the match that opens the window covering the most distinct terms (then
    the most matches; the earliest on ties)."""
    best, best_key = 0, (-1, -1)
    anchors = matches[:MAX_ANCHORS]
    for i, (start, _) in enumerate(anchors):
        seen: set[str] = set()
        count = 0
        for pos, term in anchors[i:]:
            if pos - start > width - LEAD_CHARS:
                break
            seen.add(term)
            count += 1
        if (len(seen), count) > best_key:
            best, best_key = start, (len(seen), count)
    return best


def _bounds(text: str, anchor: int, width: int) -> tuple[int, int]:
    """A window of at most ``width`` characters around ``anchor``, cut at whitespace."""
    start = max(0, anchor - LEAD_CHARS)
    if start > 0 and not text[start - 1].isspace():
        cut = next((i for i in range(start, anchor) if text[i].isspace()), anchor - 1)
        start = cut + 1
    end = min(len(text), start + width)
    if end < len(text) and not text[end].isspace():
        cut = next((i for i in range(end - 1, start, -1) if text[i].isspace()), end)
        end = cut
    return start, end


def snippet(
    analyzer: Analyzer, text: str, terms: Collection[str], width: int = SNIPPET_CHARS
) -> str:
    """About ``width`` characters of ``text`` around its query ``terms``, whole words,
    whitespace collapsed, "…" where text was cut."""
    flat = " ".join(_MARKUP.sub(" ", text).split())
    if len(flat) <= width:
        return flat
    matches = _matches(analyzer, flat, terms)
    anchor = _best_anchor(matches, width) if matches else 0
    start, end = _bounds(flat, anchor, width)
    body = flat[start:end].strip()
    return f"{ELLIPSIS if start > 0 else ''}{body}{ELLIPSIS if end < len(flat) else ''}"
