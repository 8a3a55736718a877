"""Combining Trafilatura's precision and recall passes into one markdown text (pure).

The precision pass drops more boilerplate (link-dense lists and tables, newsletter boxes,
"Popular on ..." blocks) but also section headings inside the article: it deletes headings by
link density and trailing headings before it knows what follows them. The recall pass keeps
them. So the precision text is the base, the recall text is the reference:

- when precision kept less than ``KEEP_SHARE`` of what recall found, it probably lost the
  article itself (a page whose body sits in a block precision prunes), and recall is used;
- otherwise every heading recall found *between two blocks precision kept* goes back in
  front of the block it introduces. Headings before the first kept block (the page title,
  which the reader returns as ``title``, a standfirst) and after the last one (teaser and
  newsletter headings) stay out.

Measured on the Article Extraction Benchmark (bench/reader/bench_aeb.py) and on the generated
article set (bench/reader/eval_extraction.py); see docs/reader.md.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

# Under this share of the recall text's length, the precision text is not trusted.
KEEP_SHARE = 0.5
# The structural lines restored, as Trafilatura writes them: ATX headings and list items.
_HEADING = re.compile(r"^ {0,3}#{1,6} ")
_ITEM = re.compile(r"^\s*(?:[-*+] |\d{1,9}[.)] )")


def combine(precise: str, recall: str) -> str:
    """The precision text with the recall text's interior headings, or the recall text."""
    if len(precise) < KEEP_SHARE * len(recall):
        return recall
    return restore_structure(precise, recall)


def restore_structure(precise: str, recall: str) -> str:
    """Put back the headings and list items of ``recall`` that precision dropped inside the
    article: a run of them right before a line ``precise`` kept (not before the first one: a
    title), a list leading into the first kept line, a list right after the last one."""
    lines = precise.split("\n")
    kept = [n for n, line in enumerate(lines) if line.strip()]
    theirs = [line for line in recall.split("\n") if line.strip()]
    # The precision text is (nearly) a subsequence of the recall text: align the two.
    ours = [lines[n].strip() for n in kept]
    matcher = SequenceMatcher(None, ours, [t.strip() for t in theirs], autojunk=False)
    before: dict[int, list[str]] = {}  # line number in ``lines`` -> lines to put before it
    after: list[str] = []
    for op, i1, _, j1, j2 in matcher.get_opcodes():
        if op != "insert" or not kept:
            continue
        dropped = theirs[j1:j2]
        if i1 == len(kept):  # after the last kept line: a list that goes on from it
            after = _leading_run(dropped, items_only=True)
        else:  # before a kept line: the structure that introduces it
            run = _trailing_run(dropped, items_only=i1 == 0)
            if run:
                before[kept[i1]] = run
    if not before and not after:
        return precise
    out: list[str] = []
    for n, line in enumerate(lines):
        if n in before:
            out += [*before[n], ""]
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
