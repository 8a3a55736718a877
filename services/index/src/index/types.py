"""Domain types of the corpus (plain frozen dataclasses; no proto)."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

KINDS = frozenset({"html", "markdown", "text", "pdf"})


@dataclass(frozen=True, slots=True)
class Document:
    """A local document, already extracted to markdown; ``id`` is ``local:`` + its path."""

    id: str
    title: str
    markdown: str
    content_hash: str
    size: int = 0
    mtime_ns: int = 0
    kind: str = "text"


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """What the corpus knows about a document, without its text."""

    id: str
    content_hash: str
    size: int
    mtime_ns: int
    title: str
    kind: str
    chunks: int
    # When this version was staged (ISO 8601 UTC); "" for documents stored before it was kept.
    indexed_at: str = ""
    # Chunk index at which each PDF page starts (page n begins at page_starts[n - 1]);
    # empty when the text marked no page breaks.
    page_starts: tuple[int, ...] = ()

    def page_of(self, chunk: int) -> int:
        """The 1-based page holding the document's ``chunk`` (0-based); 0 when not paged."""
        return bisect_right(self.page_starts, chunk) if self.page_starts else 0


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """Sizes of the searchable index and how many staged changes wait for a commit."""

    documents: int
    chunks: int
    pending: int
    committed_at: str  # ISO 8601 UTC; empty if never committed
    embedded: int = 0  # passages with a stored vector
    embedding_model: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    """One document matching a query: its best chunk's score and a snippet of it."""

    id: str
    title: str
    snippet: str
    score: float
    rank: int  # 1-based


@dataclass(frozen=True, slots=True)
class PassageHit:
    """One passage for a set of queries: RRF of its BM25 and dense ranks (0: unranked)."""

    document_id: str
    document_title: str
    text: str
    index: int  # 0-based within its document
    score: float
    lexical_rank: int
    dense_rank: int
    page: int = 0  # 1-based PDF page; 0 when unknown
