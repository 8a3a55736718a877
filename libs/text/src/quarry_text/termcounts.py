"""Per-text term counts and lengths, as the analyser would count them; pure.

BM25 over a call's chunks needs, per chunk, the frequency of each query term and the
chunk's length; every other term only adds to the length. Tokenising ~150k words into
Python strings and hashing each one was most of a RankChunks call, so ASCII texts (most of
the web) take a path that never makes a string per token:

- all ASCII texts are lowercased, joined and mapped to ``[0-9a-z]`` runs separated by
  spaces with one ``bytes.translate``; numpy finds the token boundaries (lengths);
- a surface form can only analyse to query term ``t`` if it starts with ``t`` minus its
  end (see :func:`_prefix`), so only tokens with that prefix are visited (``bytes.find``)
  and analysed, each distinct form once.

Other texts are tokenised with the analyser. Both paths give identical counts (a property
test holds them to it). Compound query terms ("core.autocrlf", "--force": see
:mod:`quarry_text.analyzer`) are counted apart, from each text's compounds. Lengths count every
token, stop-words included: stop-words never match, but they are text all the same, and
counting them needs no per-token work.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from quarry_text.analyzer import Analyzer, ascii_separators, is_compound

Counts = npt.NDArray[np.int64]
_SPACE = 0x20


def _matches(analyzer: Analyzer, form: str, term: str) -> bool:
    """True when surface token ``form`` analyses to ``term``."""
    if analyzer.is_stopword(form):
        return False
    return analyzer.stems([form])[form] == term


def _key(tokens: Sequence[bytes]) -> bytes:
    """Near-duplicate key: equal exactly when the token sequences are equal."""
    lengths = np.fromiter(map(len, tokens), np.int32, len(tokens))
    return b"".join(tokens) + b"\x00" + lengths.tobytes()


def _token_path(
    analyzer: Analyzer, query_terms: Sequence[str], text: str
) -> tuple[npt.NDArray[np.int64], bytes]:
    """Counts row (query-term tfs, then length) and key of one text, via its tokens."""
    tokens = analyzer.surface_tokens(text)
    q_index = {term: j for j, term in enumerate(query_terms)}
    row = np.zeros(len(query_terms) + 1, np.int64)
    row[-1] = len(tokens)
    counts = Counter(tokens)
    stems = analyzer.stems(t for t in counts if not analyzer.is_stopword(t))
    for form, stem in stems.items():
        j = q_index.get(stem)
        if j is not None:
            row[j] += counts[form]
    return row, _key([t.encode() for t in tokens])


def _ascii_path(
    analyzer: Analyzer, query_terms: Sequence[str], texts: Sequence[str]
) -> tuple[Counts, list[bytes]]:
    """Counts and keys of ASCII texts without a Python object per token."""
    n = len(texts)
    lowered = [t.lower() for t in texts]
    # One leading space, then each text followed by one: every token is preceded by b" ".
    buf = (" " + " ".join(lowered) + " ").encode().translate(ascii_separators())
    starts = np.cumsum([1] + [len(t) + 1 for t in lowered])  # text i is buf[starts[i]:...]
    codes = np.frombuffer(buf, np.uint8)
    word = codes != _SPACE
    tok_start = np.flatnonzero(word[1:] > word[:-1]) + 1  # space then word byte
    tok_end = np.flatnonzero(word[:-1] > word[1:]) + 1  # word byte then space
    doc = np.searchsorted(starts, tok_start, side="right") - 1
    counts = np.zeros((n, len(query_terms) + 1), np.int64)
    counts[:, -1] = np.bincount(doc, minlength=n)
    first = np.searchsorted(doc, np.arange(n + 1))  # tokens of text i: first[i]..first[i+1]
    lengths = (tok_end - tok_start).astype(np.int32)
    # Keys as in _key: every token's bytes back to back, then the token lengths.
    chars = codes[word].tobytes()
    char_end = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))[first]
    keys = [
        chars[char_end[i] : char_end[i + 1]] + b"\x00" + lengths[first[i] : first[i + 1]].tobytes()
        for i in range(n)
    ]
    for j, term in enumerate(query_terms):
        if term.isascii() and not is_compound(term):
            positions = _occurrences(analyzer, buf, term)
            if positions:
                counts[:, j] = np.bincount(
                    np.searchsorted(starts, positions, "right") - 1, minlength=n
                )
    return counts, keys


def _prefix(term: str) -> bytes:
    """What every surface form analysing to ``term`` starts with: Snowball English rewrites
    only a word's end, by at most one character of the stem ("happy" -> "happi"), or two
    for "-ying" -> "-ie" ("dying" -> "die"); checked over ~250k distinct words (the
    stdlib's sources and docstrings and the documentation on a Debian machine)."""
    tail = 2 if term.endswith("ie") else 1
    return term[: max(1, len(term) - tail)].encode()


def surface_prefix(term: str) -> str:
    """What every surface form analysing to (ASCII) ``term`` starts with (see _prefix)."""
    return _prefix(term).decode()


def _occurrences(analyzer: Analyzer, buf: bytes, term: str) -> list[int]:
    """Start offsets in ``buf`` of the tokens that analyse to ``term`` (in no set order)."""
    prefix = _prefix(term)
    if len(prefix) == 1:
        return _occurrences_of_common_prefix(analyzer, buf, prefix, term)
    needle = b" " + prefix
    decided: dict[bytes, bool] = {}
    found: list[int] = []
    pos = buf.find(needle)
    while pos >= 0:
        end = buf.find(b" ", pos + 1)  # every token is followed by a space
        form = buf[pos + 1 : end]
        hit = decided.get(form)
        if hit is None:
            hit = decided[form] = _matches(analyzer, form.decode(), term)
        if hit:
            found.append(pos + 1)
        pos = buf.find(needle, end)
    return found


def _occurrences_of_common_prefix(
    analyzer: Analyzer, buf: bytes, prefix: bytes, term: str
) -> list[int]:
    """:func:`_occurrences` for a one-letter prefix, which ~1 token in 20 has: collect the
    candidate forms in one regex scan, then find only the forms that match (2x faster)."""
    # A space, then the prefix and the rest of the token (tokens are [0-9a-z] runs).
    candidates = set(re.findall(rb" (" + re.escape(prefix) + rb"[0-9a-z]*)", buf))
    found: list[int] = []
    for form in candidates:
        if _matches(analyzer, form.decode(), term):
            needle = b" " + form + b" "
            pos = buf.find(needle)
            while pos >= 0:
                found.append(pos + 1)
                # The closing space may open the next token: search on from it.
                pos = buf.find(needle, pos + len(form) + 1)
    return found


def term_counts(
    analyzer: Analyzer, query_terms: Sequence[str], texts: Sequence[str]
) -> tuple[Counts, list[bytes]]:
    """Per text: the count of each (distinct) query term, then its length in tokens; and a
    near-duplicate key per text, equal exactly when two texts have the same tokens."""
    counts = np.zeros((len(texts), len(query_terms) + 1), np.int64)
    keys = [b""] * len(texts)
    ascii_ids = [i for i, t in enumerate(texts) if t.isascii()]
    if ascii_ids:
        sub_counts, sub_keys = _ascii_path(analyzer, query_terms, [texts[i] for i in ascii_ids])
        counts[ascii_ids] = sub_counts
        for i, key in zip(ascii_ids, sub_keys, strict=True):
            keys[i] = key
    for i, text in enumerate(texts):
        if not text.isascii():
            counts[i], keys[i] = _token_path(analyzer, query_terms, text)
    _count_compounds(analyzer, query_terms, texts, counts)
    return counts, keys


def _count_compounds(
    analyzer: Analyzer, query_terms: Sequence[str], texts: Sequence[str], counts: Counts
) -> None:
    """Fill the columns of compound query terms from each text's compounds."""
    columns = {t: j for j, t in enumerate(query_terms) if is_compound(t)}
    if not columns:
        return
    for i, text in enumerate(texts):
        for term, n in Counter(analyzer.compound_terms(text)).items():
            j = columns.get(term)
            if j is not None:
                counts[i, j] = n


def term_frequencies(analyzer: Analyzer, text: str) -> tuple[dict[str, int], int]:
    """Every term of one text and its count (as ``analyzer.terms`` counts them, compound
    terms included), and the text's length in tokens (stop-words counted, as above): what
    an index stores per passage. Each distinct surface form is analysed once."""
    tokens = analyzer.surface_tokens(text)
    forms = Counter(tokens)
    stems = analyzer.stems(t for t in forms if not analyzer.is_stopword(t))
    counts: dict[str, int] = {}
    for form, stem in stems.items():
        counts[stem] = counts.get(stem, 0) + forms[form]
    for term, n in Counter(analyzer.compound_terms(text)).items():
        counts[term] = counts.get(term, 0) + n
    return counts, len(tokens)
