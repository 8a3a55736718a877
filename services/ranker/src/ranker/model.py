"""Domain types of the ranker (plain frozen dataclasses; no proto); pages and their chunks
are the text library's (:mod:`quarry_text.chunking`)."""

from __future__ import annotations

from dataclasses import dataclass

from quarry_text.chunking import Chunk


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search engine result."""

    url: str
    title: str = ""
    snippet: str = ""
    # 1-based position in the engine's order; 0 means unknown (sorted after known ranks).
    engine_rank: int = 0
    engines: tuple[str, ...] = ()
    published: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class RankedResult:
    """A result in fused order with the signals that placed it."""

    result: SearchResult
    bm25f_score: float
    lexical_rank: int | None  # None when no query term matched
    rrf_score: float
    rank: int


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    """A chunk with its BM25 score."""

    chunk: Chunk
    score: float
