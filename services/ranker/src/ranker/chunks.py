"""RankChunks: chunk pages, drop near-duplicates, score chunks with bm25s; pure (no I/O).

bm25s gets a fresh in-memory index per call, built from token ids this module makes with
the shared :class:`~ranker.analyzer.Analyzer` and its process-wide term dictionary
(bm25s's own tokenizer re-tokenises and re-stems every call, most of its cost). Chunking
already tokenised each chunk, so every token costs one dictionary lookup here. Only query
terms can score, so the vocabulary handed to bm25s is the query's terms plus one id
standing for every other term: document lengths, ``N`` and every query term's ``df`` are
exactly those of a full index, and so are the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import bm25s
import numpy as np
import numpy.typing as npt

from ranker.analyzer import Analyzer
from ranker.chunking import DEFAULT_CHUNK_WORDS, chunk_page_tokens, dedupe_chunks
from ranker.errors import BoundExceededError
from ranker.model import Chunk, Page, ScoredChunk
from ranker.urls import normalize_url
from ranker.vocabulary import STOP_ID

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


def _term_counts(
    analyzer: Analyzer, query_terms: Sequence[str], surface: Sequence[Sequence[str]]
) -> npt.NDArray[np.intp]:
    """A documents x (len(q) + 2) matrix: per document, the count of each query term, then
    of every other term, then of stop-words."""
    snap, ids = analyzer.vocabulary.lookup(list(chain.from_iterable(surface)))
    other, stop = len(query_terms), len(query_terms) + 1
    # Term id -> column; ids beyond this call's snapshot size cannot occur in ``ids``.
    column = np.full(max(len(snap.term_ids), int(ids.max(initial=0)) + 1), other, np.intp)
    column[STOP_ID] = stop
    for position, term in enumerate(query_terms):
        term_id = snap.term_ids.get(term)
        if term_id is not None:
            column[term_id] = position
    n_docs, width = len(surface), other + 2
    lengths = np.fromiter(map(len, surface), np.intp, n_docs)
    doc_of_token = np.repeat(np.arange(n_docs, dtype=np.intp), lengths)
    counts = np.bincount(doc_of_token * width + column[ids], minlength=n_docs * width)
    return counts.reshape(n_docs, width)


def _bags(counts: npt.NDArray[np.intp]) -> list[list[int]]:
    """Per document, a bag of ids as long as its non-stop-word terms: query term i -> i,
    any other term -> one shared "other" id. Order within a bag does not matter to BM25."""
    other = counts.shape[1] - 2
    bags: list[list[int]] = [[] for _ in range(counts.shape[0])]
    docs, terms = np.nonzero(counts[:, :other])
    for doc, term, tf in zip(
        docs.tolist(), terms.tolist(), counts[docs, terms].tolist(), strict=True
    ):
        bags[doc] += [term] * tf
    for bag, rest in zip(bags, counts[:, other].tolist(), strict=True):
        bag += [other] * rest
    return bags


def bm25_scores(
    analyzer: Analyzer, query_terms: Sequence[str], surface: Sequence[Sequence[str]]
) -> list[float]:
    """BM25 (bm25s, Lucene variant) of each document (its surface tokens) for the query."""
    if not surface or not query_terms:
        # bm25s's get_scores([]) raises IndexError: an empty query scores nothing.
        return [0.0] * len(surface)
    corpus_ids = _bags(_term_counts(analyzer, query_terms, surface))
    if not any(corpus_ids):
        return [0.0] * len(surface)  # no terms at all: avoid bm25s's 0 / 0 average length
    vocab = {term: i for i, term in enumerate(query_terms)}
    vocab["\x00other"] = len(query_terms)  # cannot collide: analysed terms have no NUL
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index((corpus_ids, vocab), create_empty_token=False, show_progress=False)
    scores = retriever.get_scores(list(range(len(query_terms))))
    return [float(s) for s in np.asarray(scores, dtype=np.float64)]


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
    surface: list[list[str]] = []
    for page in pages:
        for chunk, tokens in chunk_page_tokens(page, p.chunk_words, analyzer.surface_tokens):
            produced.append(chunk)
            surface.append(tokens)
        if len(produced) > p.max_chunks:
            raise BoundExceededError(f"pages produce more than {p.max_chunks} chunks")
    kept = dedupe_chunks(produced, surface)
    chunks = [produced[i] for i in kept]
    scores = bm25_scores(analyzer, analyzer.query_terms(query), [surface[i] for i in kept])
    order = sorted(range(len(chunks)), key=lambda i: -scores[i])
    if p.one_per_url:
        order = _best_per_url(chunks, order, p.top_k)
    if p.top_k:
        order = order[: p.top_k]
    return [ScoredChunk(chunks[i], scores[i]) for i in order], len(chunks)
