"""A generated corpus for the corpus tests: hundreds of documents of every kind, a few odd
ones (empty, stop-words only, one enormous word, NULs, CJK), each with a marker word."""

from __future__ import annotations

import hashlib
import random

from index.types import Document

TOPICS = {
    "python": "python interpreter virtualenv package import module install pip wheel",
    "rust": "rust cargo borrow checker lifetime trait crate ownership compile",
    "garden": "garden tomato compost soil seed water harvest prune mulch",
    "sailing": "sailing boat keel wind tack jib harbour anchor tide",
    "baking": "baking bread dough yeast oven flour knead crust proof",
}
FILLER = [
    "the",
    "and",
    "of",
    "a",
    "to",
    "in",
    "is",
    "it",
    "that",
    "this",
    "with",
    "for",
    "on",
    "as",
    "are",
    "was",
    "be",
    "by",
]
KINDS = ("html", "markdown", "text", "pdf")


def marker(i: int) -> str:
    """A word only document ``i`` contains."""
    return f"zq{i}marker"


def _text(rng: random.Random, topic: str, words: int) -> str:
    vocab = TOPICS[topic].split()
    paras = []
    while words > 0:
        n = min(words, rng.randint(20, 120))
        paras.append(" ".join(rng.choice(vocab + FILLER * 2) for _ in range(n)) + ".")
        words -= n
    return "\n\n".join(paras)


def document(i: int, version: int = 0, seed: int = 7) -> Document:
    """Document ``i`` (``version`` changes its text and hash)."""
    rng = random.Random(seed * 1_000_003 + i * 31 + version)
    topic = sorted(TOPICS)[i % len(TOPICS)]
    kind = KINDS[i % len(KINDS)]
    words = rng.choice((30, 200, 600, 1500))
    body = _text(rng, topic, words)
    markdown = f"# {topic.title()} notes {i}\n\n{marker(i)} v{version}\n\n{body}"
    if i % 97 == 5:
        markdown = ""  # extraction found nothing (e.g. a scanned PDF)
    elif i % 97 == 6:
        markdown = " ".join(FILLER)  # only stop-words
    elif i % 97 == 7:
        markdown = f"{marker(i)} " + "x" * 20_000  # one enormous token
    elif i % 97 == 8:
        markdown = f"{marker(i)} null\x00bytes and {topic} 東京の庭園 Über Straße"
    return _doc(f"local:/corpus/{topic}/{i:04d}.{kind}", f"{topic} {i}", markdown, kind)


def _doc(doc_id: str, title: str, markdown: str, kind: str) -> Document:
    digest = hashlib.sha256(markdown.encode()).hexdigest()
    return Document(doc_id, title, markdown, digest, len(markdown.encode()), 1_700_000_000, kind)


def corpus(n: int, seed: int = 7) -> list[Document]:
    """Documents 0 .. n-1."""
    return [document(i, seed=seed) for i in range(n)]
