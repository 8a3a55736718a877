"""RankChunks: chunk pages, drop near-duplicates, score chunks with bm25s; pure (no I/O).

bm25s gets a fresh in-memory index per call, built from token ids this module makes with
the shared :class:`~ranker.analyzer.Analyzer` (bm25s's own tokenizer re-stems every call,
which is most of its cost). Only query terms can score, so the vocabulary handed to bm25s
is the query's terms plus one id standing for every other term: document lengths, ``N``
and every query term's ``df`` are exactly those of a full index, so are the scores, and
the per-call vocabulary work shrinks to a few ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

from ranker.analyzer import Analyzer
from ranker.chunking import DEFAULT_CHUNK_WORDS, chunk_page_tokens, dedupe_chunks
from ranker.errors import BoundExceededError
from ranker.model import Chunk, Page, ScoredChunk
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


def _token_ids(
    analyzer: Analyzer, query_terms: Sequence[str], surface: Sequence[Sequence[str]]
) -> list[list[int]]:
    """Per document, a bag of ids as long as its non-stop-word terms: query term i -> i,
    any other term -> len(query_terms). Order within a bag does not matter to BM25."""
    counts = [Counter(toks) for toks in surface]
    distinct: set[str] = set().union(*counts)
    stops = [t for t in distinct if analyzer.is_stopword(t)]
    stems = analyzer.stems(t for t in distinct if not analyzer.is_stopword(t))
    q_index = {term: i for i, term in enumerate(query_terms)}
    # Surface forms that analyse to a query term ("installs", "installing" -> "instal").
    forms = [(t, q_index[s]) for t, s in stems.items() if s in q_index]
    other = len(query_terms)
    bags: list[list[int]] = []
    for toks, count in zip(surface, counts, strict=True):
        rest = len(toks) - sum(count.get(t, 0) for t in stops)
        bag: list[int] = []
        for form, qid in forms:
            tf = count.get(form, 0)
            if tf:
                bag += [qid] * tf
                rest -= tf
        bag += [other] * rest
        bags.append(bag)
    return bags


def bm25_scores(
    analyzer: Analyzer, query_terms: Sequence[str], surface: Sequence[Sequence[str]]
) -> list[float]:
    """BM25 (bm25s, Lucene variant) of each document (its surface tokens) for the query."""
    if not surface or not query_terms:
        # bm25s's get_scores([]) raises IndexError: an empty query scores nothing.
        return [0.0] * len(surface)
    corpus_ids = _token_ids(analyzer, query_terms, surface)
    if not any(corpus_ids):
        return [0.0] * len(surface)  # no terms at all: avoid bm25s's 0 / 0 average length
    vocab = {term: i for i, term in enumerate(query_terms)}
    vocab["\x00other"] = len(query_terms)  # cannot collide: analysed terms have no NUL
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index((corpus_ids, vocab), create_empty_token=False, show_progress=False)
    scores = retriever.get_scores(list(range(len(query_terms))))
    return [float(s) for s in np.asarray(scores, dtype=np.float64)]


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
        seen: set[str] = set()
        best: list[int] = []
        for i in order:
            key = normalize_url(chunks[i].url)
            if key not in seen:
                seen.add(key)
                best.append(i)
        order = best
    if p.top_k:
        order = order[: p.top_k]
    return [ScoredChunk(chunks[i], scores[i]) for i in order], len(chunks)
