"""BM25, Lucene variant, as bm25s computes it (k1 1.5, b 0.75); pure.

For distinct query terms ``t`` and a text ``d`` of ``len(d)`` tokens among ``N`` texts::

    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(d) = sum_t idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * len(d) / avglen))

Two ways in, one formula:

- :func:`scores_from_counts` (the ranker, per call): bm25s gets a fresh in-memory index built
  from :mod:`quarry_text.termcounts` rows (bm25s's own tokenizer re-tokenises and re-stems
  every call, most of its cost). Only query terms can score, so the vocabulary handed to
  bm25s is the query's terms plus one id standing for every other token: document lengths,
  ``N`` and every query term's ``df`` are exactly those of a full index, and so are the
  scores. Each bag holds only the query-term ids and one "other" id, with ``len()`` giving
  the true length (see ``_Bag``): bm25s's index build fell from 15 to 5 ms for 340 chunks of
  460 words (bench/ranker).
- :func:`idf` and :func:`term_scores` (the index, over stored postings): bm25s rebuilds its
  score matrix from scratch on every ``index()`` and has no incremental update, so the index
  keeps its own postings and scores them with these; a unit test holds both ways to the same
  numbers and to rank_bm25.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import bm25s
import numpy as np
import numpy.typing as npt

from quarry_text.analyzer import Analyzer
from quarry_text.termcounts import Counts, term_counts

# bm25s's defaults (Lucene variant: idf = ln(1 + (N - df + .5) / (df + .5)),
# tf part = tf / (tf + k1 * (1 - b + b * len / avglen))).
BM25_K1 = 1.5
BM25_B = 0.75

Floats = npt.NDArray[np.float64]


def idf(df: int, n_docs: int) -> float:
    """Lucene's BM25 idf, always > 0 (bm25s's, and BM25F's in :mod:`quarry_text.bm25f`)."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def term_scores(
    term_idf: float, tf: Floats, lengths: npt.NDArray[np.integer], avg_len: float
) -> Floats:
    """One term's BM25 contribution to each text holding it: ``tf`` its counts there,
    ``lengths`` those texts' lengths, ``avg_len`` the average length over all texts."""
    norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / avg_len)
    scores: Floats = term_idf * tf / (tf + norm)
    return scores


class _Bag(list[int]):
    """A document's query-term ids (each repeated tf times) plus one "other" id, whose
    ``len()`` is the document's true length.

    bm25s 0.3 reads a document only through ``len()`` (its length) and iteration (term
    counts, document frequencies), and only query terms are ever scored, so the tf of the
    "other" id is irrelevant: scores equal those of the full bag of ``len`` ids, without
    building and counting a list as long as the text (the oracle tests pin this equality).
    """

    def __init__(self, ids: list[int], length: int) -> None:
        super().__init__(ids)
        self._length = length

    def __len__(self) -> int:
        return self._length


def _bags(counts: Counts) -> list[list[int]]:
    """Per document, its query-term ids (term j -> j, repeated tf times) and, when other
    tokens exist, the one "other" id; ``len()`` of each is the document's length."""
    n_terms = counts.shape[1] - 1
    tfs = counts[:, :n_terms]
    ids: list[list[int]] = [[] for _ in range(counts.shape[0])]
    docs, terms = np.nonzero(tfs)
    for doc, term, tf in zip(docs.tolist(), terms.tolist(), tfs[docs, terms].tolist(), strict=True):
        ids[doc] += [term] * tf
    lengths = counts[:, n_terms].tolist()
    rest = (counts[:, n_terms] - tfs.sum(axis=1)).tolist()
    return [
        _Bag([*bag, n_terms] if n > 0 else bag, length)
        for bag, n, length in zip(ids, rest, lengths, strict=True)
    ]


def scores_from_counts(counts: Counts) -> list[float]:
    """BM25 (bm25s, Lucene variant) per document from :func:`term_counts` rows."""
    n_terms = counts.shape[1] - 1
    if counts.shape[0] == 0 or n_terms == 0:
        # bm25s's get_scores([]) raises IndexError: an empty query scores nothing.
        return [0.0] * counts.shape[0]
    if not counts[:, n_terms].any():
        return [0.0] * counts.shape[0]  # no tokens at all: avoid bm25s's 0 / 0 average length
    vocab = {f"q{j}": j for j in range(n_terms + 1)}
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index((_bags(counts), vocab), create_empty_token=False, show_progress=False)
    scores = retriever.get_scores(list(range(n_terms)))
    return [float(s) for s in np.asarray(scores, dtype=np.float64)]


def bm25_scores(
    analyzer: Analyzer, query_terms: Sequence[str], texts: Sequence[str]
) -> list[float]:
    """BM25 of each text for the distinct analysed ``query_terms``."""
    return scores_from_counts(term_counts(analyzer, query_terms, texts)[0])
