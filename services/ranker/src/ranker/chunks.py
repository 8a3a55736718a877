"""RankChunks: chunk pages, drop near-duplicates, score chunks with bm25s; pure (no I/O).

bm25s gets a fresh in-memory index per call, built from term counts this module gets from
:mod:`ranker.termcounts` with the shared analyser (bm25s's own tokenizer re-tokenises and
re-stems every call, most of its cost). Only query terms can score, so the vocabulary
handed to bm25s is the query's terms plus one id standing for every other token: document
lengths, ``N`` and every query term's ``df`` are exactly those of a full index, and so
are the scores. Each bag holds only the query-term ids and one "other" id, with ``len()``
giving the true length (see ``_Bag``): bm25s's index build fell from 15 to 5 ms for 340
chunks of 460 words (bench/ranker).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

from ranker.analyzer import Analyzer
from ranker.chunking import DEFAULT_CHUNK_WORDS, chunk_page, dedupe_chunks
from ranker.errors import BoundExceededError
from ranker.model import Chunk, Page, ScoredChunk
from ranker.termcounts import Counts, term_counts
from ranker.urls import normalize_url

# bm25s's defaults (Lucene variant: idf = ln(1 + (N - df + .5) / (df + .5)),
# tf part = tf / (tf + k1 * (1 - b + b * len / avglen))).
BM25_K1 = 1.5
BM25_B = 0.75
DEFAULT_TOP_K = 8
MAX_CHUNKS = 20_000


@dataclass(frozen=True)
class ChunksParams:
    """Knobs of one RankChunks call (defaults from the contract)."""

    top_k: int = DEFAULT_TOP_K  # 0 means all
    chunk_words: int = DEFAULT_CHUNK_WORDS
    one_per_url: bool = True
    max_chunks: int = MAX_CHUNKS


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


def _best_per_url(chunks: Sequence[Chunk], order: Sequence[int], top_k: int) -> list[int]:
    """The first chunk of each (normalised) URL in ``order``, stopping at ``top_k``."""
    keys: dict[str, str] = {}  # many chunks share a page: normalise each URL once
    seen: set[str] = set()
    best: list[int] = []
    for i in order:
        url = chunks[i].url
        key = keys.get(url)
        if key is None:
            key = keys[url] = normalize_url(url)
        if key not in seen:
            seen.add(key)
            best.append(i)
            if len(best) == top_k:
                break
    return best


def rank_chunks(
    analyzer: Analyzer, query: str, pages: Sequence[Page], params: ChunksParams | None = None
) -> tuple[list[ScoredChunk], int]:
    """Return the best chunks (best first) and how many distinct chunks were considered.

    Chunks with equal scores (including all-zero scores for a query with no terms) keep page
    order, then position within the page. With ``one_per_url`` only each URL's best chunk
    is kept (URLs compared normalised).
    """
    p = params or ChunksParams()
    produced: list[Chunk] = []
    for page in pages:
        produced += chunk_page(page, p.chunk_words)
        if len(produced) > p.max_chunks:
            raise BoundExceededError(f"pages produce more than {p.max_chunks} chunks")
    terms = analyzer.query_terms(query)
    counts, keys = term_counts(analyzer, terms, [c.text for c in produced])
    kept = dedupe_chunks(produced, keys)
    chunks = [produced[i] for i in kept]
    scores = scores_from_counts(counts[kept])
    order = sorted(range(len(chunks)), key=lambda i: -scores[i])
    if p.one_per_url:
        order = _best_per_url(chunks, order, p.top_k)
    if p.top_k:
        order = order[: p.top_k]
    return [ScoredChunk(chunks[i], scores[i]) for i in order], len(chunks)
