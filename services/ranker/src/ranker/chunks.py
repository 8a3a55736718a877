"""RankChunks: chunk pages, drop near-duplicates, score chunks with BM25; pure (no I/O).

Chunking, term counts and BM25 (bm25s over term counts) are the shared text library's
(:mod:`quarry_text`); this module picks the best chunks of a call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quarry_text.analyzer import Analyzer
from quarry_text.bm25 import scores_from_counts
from quarry_text.chunking import DEFAULT_CHUNK_WORDS, Chunk, Page, chunk_page, dedupe_chunks
from quarry_text.termcounts import term_counts

from ranker.errors import BoundExceededError
from ranker.model import ScoredChunk
from ranker.urls import normalize_url

DEFAULT_TOP_K = 8
MAX_CHUNKS = 20_000


@dataclass(frozen=True)
class ChunksParams:
    """Knobs of one RankChunks call (defaults from the contract)."""

    top_k: int = DEFAULT_TOP_K  # 0 means all
    chunk_words: int = DEFAULT_CHUNK_WORDS
    one_per_url: bool = True
    max_chunks: int = MAX_CHUNKS


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
