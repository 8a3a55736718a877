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
from collections import Counter

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
    article: runs of them between two lines ``precise`` kept, a list (not a title) leading
    into the first kept line, a list right after the last one."""
    lines = precise.split("\n")
    # A line precise holds twice ("Advertisement") cannot tell where a run goes.
    counts = Counter(line.strip() for line in lines if line.strip())
    kept = {text for text, n in counts.items() if n == 1}
    before: dict[str, list[str]] = {}
    pending: list[str] = []
    anchor = ""  # the kept line the pending run follows directly, if any
    seen_kept = False
    for line in recall.split("\n"):
        text = line.strip()
        if not text:
            continue
        if text not in counts and (_HEADING.match(line) or _ITEM.match(line)):
            pending.append(line)
            continue
        if text in counts:
            if not seen_kept:
                pending = [p for p in pending if not _HEADING.match(p)]
            if pending and text in kept:
                before.setdefault(text, []).extend(pending)
            seen_kept = True
        anchor = text if text in kept else ""
        pending = []
    after = pending if anchor and not any(_HEADING.match(p) for p in pending) else []
    if not before and not after:
        return precise
    out: list[str] = []
    for line in lines:
        restored = before.pop(line.strip(), [])
        out.extend([*restored, ""] if restored else [])
        out.append(line)
        if after and line.strip() == anchor:
            out.extend(["", *after])
    return "\n".join(out)
