"""Combining Trafilatura's precision and recall passes into one markdown text (pure).

The precision pass is better at where an article starts and ends: it leaves out the page
title and standfirst, teaser lists ("Popular on ..."), newsletter boxes and comment sections
around it. Inside the article it loses what passages need: definition lists and code of
reference pages, lists without links, section headings it deletes by link density. The
recall pass keeps all of that. So:

- when precision kept less than ``KEEP_SHARE`` of what recall found, it lost the article
  itself (a page whose body sits in a block precision prunes): the recall text is used;
- otherwise precision bounds the article and recall fills it: the two texts are aligned
  (precision's is nearly a subsequence of recall's), every gap between two lines precision
  kept is filled with recall's lines there (a line precision garbled is replaced by recall's),
  lines only precision found stay, and of what lies outside the first and last kept lines
  only a list leading into the article or going on right after it comes back.

Measured on the Article Extraction Benchmark (bench/reader/bench_aeb.py), the generated
article set (bench/reader/eval_extraction.py) and the eval's Debian doc sets; docs/reader.md.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

# Under this share of the recall text's length, the precision text is not trusted.
KEEP_SHARE = 0.5
# Markdown as Trafilatura writes it: ATX headings and list items.
_HEADING = re.compile(r"^ {0,3}#{1,6} ")
_ITEM = re.compile(r"^\s*(?:[-*+] |\d{1,9}[.)] )")


def combine(precise: str, recall: str) -> str:
    """The article as precision bounds it and recall fills it, or the recall text."""
    if len(precise) < KEEP_SHARE * len(recall):
        return recall
    return fill(precise, recall)


def fill(precise: str, recall: str) -> str:
    """The precision text with every gap inside it filled from the recall text, plus a list
    leading into its first line or going on right after its last one."""
    lines, theirs = precise.split("\n"), recall.split("\n")
    kept = [n for n, line in enumerate(lines) if line.strip()]
    full = [n for n, line in enumerate(theirs) if line.strip()]
    # The precision text is (nearly) a subsequence of the recall text: align the two.
    ours, others = [lines[n].strip() for n in kept], [theirs[n].strip() for n in full]
    matcher = SequenceMatcher(None, ours, others, autojunk=False)
    before: dict[int, list[str]] = {}  # line number in ``lines`` -> recall lines to put first
    replaced: set[int] = set()
    after: list[str] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("equal", "delete") or not kept:
            continue  # lines only precision has stay
        if i1 > 0 and i2 < len(kept):  # inside the article: recall's text, whatever it is,
            # with its own blank lines, up to the next line both texts hold
            gap = theirs[full[j1] : full[j2]] if j2 < len(full) else []
            if op == "replace":  # the blank lines after the lines replaced stay
                replaced.update(kept[i1:i2])
                while gap and not gap[-1].strip():
                    gap.pop()
            before[kept[i1]] = gap
        elif i1 == 0 and op == "insert":  # before it: a list that leads into it, not a title
            lead = _trailing_run([theirs[n] for n in full[j1:j2]], items_only=True)
            before[kept[0]] = [*lead, ""] if lead else []
        elif i1 == len(kept):  # after it: a list that goes on from its last line
            after = _leading_run([theirs[n] for n in full[j1:j2]], items_only=True)
    if not any(before.values()) and not after:
        return precise
    out: list[str] = []
    for n, line in enumerate(lines):
        out += before.get(n, [])
        if n not in replaced:
            out.append(line)
    return "\n".join([*out, "", *after] if after else out)


def _is_structure(line: str, items_only: bool) -> bool:
    return bool(_ITEM.match(line) or (not items_only and _HEADING.match(line)))


def _trailing_run(lines: list[str], items_only: bool) -> list[str]:
    """The structural lines at the end of ``lines`` (after the last other line)."""
    n = len(lines)
    while n and _is_structure(lines[n - 1], items_only):
        n -= 1
    return lines[n:]


def _leading_run(lines: list[str], items_only: bool) -> list[str]:
    """The structural lines at the start of ``lines`` (before the first other line)."""
    n = 0
    while n < len(lines) and _is_structure(lines[n], items_only):
        n += 1
    return lines[:n]
