"""Extraction quality: token F1 of the reader's extraction vs bare Trafilatura settings.

Two labelled sets: generated article pages with boilerplate (always available) and Debian's
Sphinx documentation labelled by its ``role=main`` block (when python3-doc is installed).
Run: ``.venv/bin/python bench/reader/eval_extraction.py [--pages N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import trafilatura

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from reader.extract import Job, extract
from reader.model import Kind

from bench.reader.corpus import sphinx_labelled
from services.reader.tests.labelled import Labelled, corpus, token_f1

Extractor = Callable[[str], str]


def _ours(page: str) -> str:
    return extract(Job(page.encode("utf-8"), Kind.HTML)).markdown


def _bare(**kw: object) -> Extractor:
    return lambda page: trafilatura.extract(page, **kw) or ""  # type: ignore[arg-type]


CONFIGS: dict[str, Extractor] = {
    "trafilatura default": _bare(),
    "  + no comments": _bare(include_comments=False),
    "  + favor_precision": _bare(include_comments=False, favor_precision=True),
    "  + favor_recall": _bare(include_comments=False, favor_recall=True),
    "  + fast": _bare(include_comments=False, fast=True),
    "  + markdown, recall": _bare(
        include_comments=False, favor_recall=True, output_format="markdown", include_formatting=True
    ),
    "reader Extract path": _ours,
}


def score(pages: list[Labelled], fn: Extractor) -> tuple[float, float, float, float]:
    """Mean precision, recall, F1 and ms/page of ``fn`` over ``pages``."""
    results, start = [], time.perf_counter()
    for page in pages:
        results.append(token_f1(fn(page.html), page.expected))
    ms = (time.perf_counter() - start) * 1000 / max(len(pages), 1)
    p, r, f = (statistics.fmean(x[i] for x in results) for i in range(3))
    return p, r, f, ms


def main() -> int:
    """Print the quality table; exit 1 if the reader path scores below bare default."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=150, help="pages per set")
    args = parser.parse_args()
    sets = {"generated": corpus(args.pages, first_seed=1000)}
    docs = sphinx_labelled(args.pages)
    if docs:
        sets["debian-docs"] = docs
    else:
        print("(python3-doc not installed: the documentation set is skipped)")
    _ours(sets["generated"][0].html)  # warm trafilatura's lazy imports outside the timing
    worst_margin = 1.0
    for set_name, pages in sets.items():
        print(f"\n{set_name}: {len(pages)} pages (token-level P / R / F1, mean per page)")
        print(f"  {'extractor':24} {'P':>6} {'R':>6} {'F1':>6} {'ms/page':>8}")
        scores = {}
        for name, fn in CONFIGS.items():
            p, r, f, ms = score(pages, fn)
            scores[name] = f
            print(f"  {name:24} {p:6.3f} {r:6.3f} {f:6.3f} {ms:8.1f}")
        margin = scores["reader Extract path"] - scores["trafilatura default"]
        worst_margin = min(worst_margin, margin)
        print(f"  reader - default F1: {margin:+.3f}")
    return 0 if worst_margin >= -0.005 else 1


if __name__ == "__main__":
    raise SystemExit(main())
