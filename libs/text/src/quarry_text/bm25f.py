"""BM25F over short multi-field documents (title, snippet); pure.

For query terms ``t`` (distinct), documents ``d`` with fields ``f`` of weight ``w_f``::

    tf~(t, d) = sum_f  w_f * tf_f(t, d) / (1 - b + b * len_f(d) / avglen_f)
    score(d)  = sum_t  idf(t) * tf~(t, d) * (k1 + 1) / (k1 + tf~(t, d))
    idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

Each field is length-normalised against its own average, the weighted term frequencies
are summed and saturated once (Robertson & Zaragoza, "The Probabilistic Relevance
Framework", 2009, §3.6), rather than summing per-field BM25 scores. The corpus is the set
of documents passed in (the retrieved set): ``N`` is their number and ``df(t)`` counts the
documents with ``t`` in any field. ``len_f`` counts terms after analysis; an empty field
across the whole set has no length normalisation. The idf is Lucene's, always positive, so
a document scores > 0 exactly when some query term occurs in a field of positive weight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from quarry_text.bm25 import idf

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def bm25f_scores(
    query_terms: Sequence[str],
    docs: Sequence[Sequence[Sequence[str]]],
    weights: Sequence[float],
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> list[float]:
    """Score each document (a sequence of analysed fields) against the query terms."""
    n_docs = len(docs)
    query = dict.fromkeys(query_terms)
    if n_docs == 0 or not query:
        return [0.0] * n_docs
    n_fields = len(weights)
    if any(w < 0.0 or not math.isfinite(w) for w in weights):
        raise ValueError("field weights must be finite and >= 0")
    if any(len(doc) != n_fields for doc in docs):
        raise ValueError("every document needs one term list per weight")
    avg_len = [sum(len(doc[f]) for doc in docs) / n_docs for f in range(n_fields)]
    # tf~ per document, for query terms only: other terms never affect a score.
    pseudo_tfs: list[dict[str, float]] = []
    df: dict[str, int] = dict.fromkeys(query, 0)
    for doc in docs:
        pseudo: dict[str, float] = {}
        for f, terms in enumerate(doc):
            if not terms:
                continue
            norm = weights[f] / (1.0 - b + b * len(terms) / avg_len[f])
            for term in terms:
                if term in query:
                    pseudo[term] = pseudo.get(term, 0.0) + norm
        for term in pseudo:
            df[term] += 1
        pseudo_tfs.append(pseudo)
    idfs = {t: idf(n, n_docs) for t, n in df.items()}
    return [
        sum(idfs[t] * tf * (k1 + 1.0) / (k1 + tf) for t, tf in pseudo.items())
        for pseudo in pseudo_tfs
    ]
