"""Sentence units of a passage: what the reranker and the support checker compare against.

A passage (about 120 words of a page's markdown) is split at sentence ends and line breaks;
each sentence is one unit, and so is each pair of neighbours (a fact often spans two: "The
default is X." + "It can be raised to Y."). Units are cut at ``MAX_UNIT_WORDS`` so one
run-on table row cannot dominate the embedding cost.
"""

from __future__ import annotations

import re
from itertools import pairwise

# A sentence ends at . ! ? (optionally closed by a quote or bracket) before whitespace and an
# opening capital, digit, quote, bracket or code mark; "e.g. the" and "3.7.0" do not split.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[`*])")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*|\|)")
MAX_UNIT_WORDS = 60
MIN_UNIT_CHARS = 3


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order: lines first (markdown lists, headings and table
    rows are lines), then sentence ends; markup at a line's start dropped, blanks skipped."""
    out: list[str] = []
    for line in text.splitlines():
        line = _MARKUP.sub("", line).strip().strip("|").strip()
        for part in _SENTENCE_END.split(line):
            words = part.split()
            for start in range(0, len(words), MAX_UNIT_WORDS):
                unit = " ".join(words[start : start + MAX_UNIT_WORDS])
                if len(unit) >= MIN_UNIT_CHARS:
                    out.append(unit)
    return out


def units(text: str) -> list[str]:
    """Each sentence of ``text`` and each pair of neighbouring sentences (deduplicated, in
    order); a text with no sentence gives itself."""
    sentences = split_sentences(text)
    if not sentences:
        stripped = " ".join(text.split())
        return [stripped] if stripped else []
    pairs = [f"{a} {b}" for a, b in pairwise(sentences)]
    return list(dict.fromkeys(sentences + pairs))
