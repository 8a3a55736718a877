"""The structural units of one markdown block (blank-line separated): list entries, table
rows, or the block itself; pure.

Reference pages put many short entries in one block: the reader's markdown (Trafilatura)
writes a definition list as one list with no blank lines, a term ("- -u", "- --set-upstream")
and its description ("- For every branch …") each an item, and an HTML list of long items
(SQLite's limits) as numbered items whose text runs on unindented. Split by sentences, an
option's description landed in another passage than its name. So a block is cut into units
first, and the chunker never splits a unit unless it alone is too long:

* a list block: one unit per entry, i.e. a run of short "term" items with the item that
  describes them, or one item with its continuation lines (a nested item is a continuation);
* a table: its rows in groups that fit a passage, each group led by the header row;
* anything else (prose, code): the block itself.

Each unit has a label (the terms of an entry, a long item's title line, a table's header) the
chunker repeats at the head of every piece when a unit must be split, so each piece still
names what it describes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A top-level list item: at most one space of indent, a bullet or "N." / "N)", a space, text.
_ITEM = re.compile(r" ?(?:[-*+]|\d{1,3}[.)])[ \t]+\S")
# A nested list item (indented).
_NESTED = re.compile(r"\s+(?:[-*+]|\d{1,3}[.)])[ \t]+\S")
# A table's header separator row ("|---|:--:|").
_TABLE_RULE = re.compile(r"\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?\s*")
# Terms are short: an option with its aliases, a directive, a function signature.
TERM_WORDS = 12
TERM_LINES = 2
_ENDS_SENTENCE = (".", "!", "?", ":", ";")


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit of a block: its text and the label a split piece repeats ("" if none)."""

    text: str
    label: str = ""


def _is_table(lines: list[str]) -> bool:
    return (
        len(lines) >= 3
        and all(line.lstrip().startswith("|") for line in lines)
        and bool(_TABLE_RULE.fullmatch(lines[1].strip()))
    )


def _items(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """The lines before the first top-level item, and each item's lines (code fences and
    unmatched lines continue the item they follow)."""
    lead: list[str] = []
    items: list[list[str]] = []
    fenced = False
    for line in lines:
        if not fenced and _ITEM.match(line):
            items.append([line])
        elif items:
            # A description's lines keep the man page's indent ("        upstream …"), which
            # only inflates word counts; a nested item or code keeps its own.
            plain = not fenced and not _NESTED.match(line)
            items[-1].append(line.strip() if plain else line)
        else:
            lead.append(line)
        # The reader's fences open and close mid-line too ("… available only ```").
        if line.count("```") % 2:
            fenced = not fenced
    return lead, items


def _is_term(item: list[str]) -> bool:
    """A definition-list term: a short item of a line or two that does not end a sentence.
    Two lines: Postfix's postconf.5 writes each parameter's term as its name and, on the
    next line, its default (``- **maximal_backoff_time`` / ``(default: 4000s)**``)."""
    text = " ".join(line.strip() for line in item)
    return (
        len(item) <= TERM_LINES
        and len(text.split()) <= TERM_WORDS
        and not text.endswith(_ENDS_SENTENCE)
    )


def is_head(text: str) -> bool:
    """Whether ``text`` (a unit) reads as the head of what follows it: short, and not the end
    of a sentence — a term left without its description, a title, a small table's header."""
    text = text.strip()
    return bool(text) and count(text) <= TERM_WORDS and not text.endswith(_ENDS_SENTENCE)


def _title(item: list[str]) -> str:
    """A long item's first line when it reads as a title (short, no sentence end)."""
    if len(item) > 1 and _is_term(item[:1]):
        return item[0].strip()
    return ""


def _list_units(items: list[list[str]]) -> list[Unit]:
    units: list[Unit] = []
    terms: list[str] = []
    for item in items:
        if _is_term(item):
            terms.append("\n".join([item[0].rstrip(), *(line.strip() for line in item[1:])]))
            continue
        body = "\n".join(line.rstrip() for line in item)
        if terms:
            units.append(Unit("\n".join([*terms, body]), "\n".join(t.strip() for t in terms)))
            terms = []
        else:
            units.append(Unit(body, _title(item)))
    if terms:  # a list of short items only (or terms left with no description)
        units.append(Unit("\n".join(terms)))
    return units


def _table_units(lines: list[str], limit: int) -> list[Unit]:
    """Rows packed up to ``limit`` words, each group led by the header row and its rule."""
    header = "\n".join(line.strip() for line in lines[:2])
    budget = max(1, limit - count(header))
    out: list[Unit] = []
    rows: list[str] = []
    used = 0
    for row in (line.strip() for line in lines[2:] if line.strip()):
        n = count(row)
        if rows and used + n > budget:
            out.append(Unit("\n".join([header, *rows]), header))
            rows, used = [], 0
        rows.append(row)
        used += n
    if rows:
        out.append(Unit("\n".join([header, *rows]), header))
    return out


def count(text: str) -> int:
    """Words of ``text`` (whitespace separated)."""
    return len(text.split())


def units(block: str, limit: int) -> list[Unit]:
    """The structural units of ``block`` (stripped, non-empty), in order; a table's rows
    are grouped up to ``limit`` words."""
    lines = block.splitlines()
    if _is_table(lines):
        return _table_units(lines, limit)
    if block.startswith("```"):
        return [Unit(block)]
    lead, items = _items(lines)
    if len(items) < 2:
        return [Unit(block)]
    out = [Unit("\n".join(lead).strip())] if "".join(lead).strip() else []
    return out + _list_units(items)
