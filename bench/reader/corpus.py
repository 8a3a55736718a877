"""Corpora for the reader benchmarks: Debian documentation HTML, else generated pages."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import trafilatura

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `services.reader.tests` importable
    sys.path.insert(0, str(ROOT))

from services.reader.tests.labelled import Labelled, corpus  # noqa: E402 -- after sys.path

# Sphinx-built documentation shipped by Debian packages (python3-doc and friends).
DOC_DIRS = [
    Path("/usr/share/doc/python3/html"),
    Path("/usr/share/doc/python3.11/html"),
    Path("/usr/share/doc/python3-doc/html"),
]
# Skip index-like pages (huge link lists) and stubs: not what a reader is asked to read.
MIN_BYTES, MAX_BYTES = 8_000, 400_000


def doc_pages(limit: int, seed: int = 7) -> list[tuple[str, bytes]]:
    """Up to ``limit`` documentation pages (name, HTML bytes), a fixed random sample."""
    for root in DOC_DIRS:
        if not root.is_dir():
            continue
        files = sorted(
            p
            for p in root.resolve().rglob("*.html")
            if MIN_BYTES <= p.stat().st_size <= MAX_BYTES and "genindex" not in p.name
        )
        if files:
            random.Random(seed).shuffle(files)
            return [(str(p.relative_to(root.resolve())), p.read_bytes()) for p in files[:limit]]
    return []


def generated_pages(limit: int) -> list[tuple[str, bytes]]:
    """``limit`` generated article pages (name, HTML bytes)."""
    return [(page.name, page.html.encode()) for page in corpus(limit)]


def sphinx_labelled(limit: int) -> list[Labelled]:
    """Documentation pages labelled with the text of Sphinx's ``role=main`` block."""
    out = []
    for name, body in doc_pages(limit):
        tree = trafilatura.load_html(body)
        if tree is None:
            continue
        mains = tree.xpath("//div[@role='main']")
        if not mains:
            continue
        main = mains[0]
        for link in main.xpath(".//a[contains(@class,'headerlink')]"):
            link.drop_tree()
        expected = " ".join(main.itertext())
        out.append(Labelled(f"doc:{name}", body.decode("utf-8", "replace"), expected))
    return out
