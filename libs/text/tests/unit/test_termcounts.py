"""Term counts: the ASCII fast path must agree with tokenising through the analyser."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from quarry_text.analyzer import Analyzer
from quarry_text.termcounts import _ascii_path, _prefix, _token_path, term_counts

ANALYZER = Analyzer()

# Inflections Snowball rewrites at the end (y -> i, -ational -> -ate, e-restoration ...),
# irregular forms (dying -> die), stop-words, digits and single letters.
WORDS = [
    "install",
    "installs",
    "installing",
    "installed",
    "installer",
    "relational",
    "relate",
    "relation",
    "happy",
    "happiness",
    "happily",
    "dying",
    "die",
    "dies",
    "lying",
    "lie",
    "generalization",
    "general",
    "generous",
    "sensibility",
    "sensible",
    "parse",
    "parsing",
    "parser",
    "parsed",
    "query",
    "queries",
    "querying",
    "the",
    "a",
    "of",
    "it",
    "is",
    "be",
    "being",
    "python",
    "python3",
    "3",
    "11",
    "c",
    "r",
    "x",
    "go",
    "goes",
    "going",
    "went",
    "agree",
    "agreed",
    "agreement",
    "ugly",
    "early",
    "only",
]
SEPARATORS = [" ", "  ", "\n\n", ", ", "-", ". ", "'", "_", " (", ") ", "/"]


@st.composite
def texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), max_size=40))
    out = []
    for word in words:
        cased = word.upper() if draw(st.booleans()) and len(word) < 4 else word
        out.append(cased + draw(st.sampled_from(SEPARATORS)))
    return "".join(out)


def _slow(terms: list[str], docs: list[str]) -> tuple[np.ndarray, list[bytes]]:
    rows = [_token_path(ANALYZER, terms, d) for d in docs]
    counts = np.array([r for r, _ in rows]).reshape(len(docs), len(terms) + 1)
    return counts, [k for _, k in rows]


@settings(max_examples=150, deadline=None)
@given(st.lists(texts(), min_size=1, max_size=5), st.lists(st.sampled_from(WORDS), max_size=6))
def test_fast_path_agrees_with_the_analyser(docs: list[str], query: list[str]) -> None:
    terms = ANALYZER.query_terms(" ".join(query))
    fast_counts, fast_keys = _ascii_path(ANALYZER, terms, docs)
    slow_counts, slow_keys = _slow(terms, docs)
    assert fast_counts.tolist() == slow_counts.tolist()
    assert fast_keys == slow_keys


def test_counts_and_lengths() -> None:
    terms = ANALYZER.query_terms("installing python")  # ["instal", "python"]
    counts, _ = term_counts(
        ANALYZER, terms, ["Install the installer; INSTALLED python3!", "", "Über python"]
    )
    # "installer" stems to "instal" too; "python3" is its own term; lengths count stop-words.
    assert counts.tolist() == [[3, 0, 5], [0, 0, 0], [0, 1, 2]]


def test_keys_ignore_case_markup_and_curly_quotes() -> None:
    _, keys = term_counts(
        ANALYZER, [], ["It\u2019s **the** same!", "it's the same", "its the same"]
    )
    assert keys[0] == keys[1] != keys[2]


def test_stopword_forms_never_match() -> None:
    # "being" analyses to "be"; the stop-word "be" itself must not count.
    terms = ANALYZER.query_terms("being")
    counts, _ = term_counts(ANALYZER, terms, ["to be or not to be, being"])
    assert counts.tolist() == [[1, 7]]


def test_every_form_starts_with_its_terms_prefix() -> None:
    # The fast path only visits tokens starting with _prefix(term); check the stemmer keeps
    # to that over real English: every word of a few stdlib modules' docstrings.
    import argparse
    import collections
    import email.message
    import inspect
    import json
    import logging
    import os
    import pathlib
    import re
    import subprocess

    words: set[str] = set()
    modules = (argparse, collections, email.message, inspect, json, os, pathlib, re, subprocess)
    for module in (*modules, logging):
        for name in dir(module):
            doc = getattr(getattr(module, name), "__doc__", None)
            if isinstance(doc, str):
                words.update(t for t in ANALYZER.surface_tokens(doc) if t.isascii())
    words.update(["dying", "lying", "tying", "skies", "happy", "generalization", "sensibility"])
    assert len(words) > 2000
    stems = ANALYZER.stems(words)
    misses = [w for w in words if not w.encode().startswith(_prefix(stems[w]))]
    assert misses == []


def test_compound_query_terms_are_counted_from_each_texts_compounds() -> None:
    texts = [
        "- -u\n- --set-upstream\n- For every branch that is up to date, add upstream.",
        "Use the u key. Do not force it.",
        "核心 core.autocrlf 設定 core.autocrlf",  # the token path (not ASCII)
    ]
    terms = ["-u", "u", "--set-upstream", "core.autocrlf", "forc"]
    counts, _ = term_counts(ANALYZER, terms, texts)
    assert counts[:, :5].tolist() == [[1, 1, 1, 0, 0], [0, 1, 0, 0, 1], [0, 0, 0, 2, 0]]
