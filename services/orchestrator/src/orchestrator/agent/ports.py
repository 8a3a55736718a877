"""What the agent loop needs from the LLM, search, the reader, the ranker and the corpus.

Narrow protocols over the domain values of :mod:`orchestrator.agent.domain`; the adapters in
``orchestrator.clients`` implement them over HTTP and gRPC, the loop's unit tests in process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from orchestrator.agent.domain import (
    Evidence,
    PageRead,
    PageText,
    Passage,
    SearchHit,
    SearchResponse,
)
from orchestrator.schemas import Judgement, Plan
from orchestrator.sessions import Turn

T = TypeVar("T")


@dataclass(frozen=True)
class Decision(Generic[T]):
    """A structured LLM call's outcome; ``used_default`` when the output was never valid."""

    value: T
    used_default: bool = False
    attempts: int = 1


@dataclass(frozen=True)
class Checked:
    """An answer after the engine checked its citations."""

    text: str
    cited: list[int]
    removed_citations: list[int]
    replaced: list[dict[str, int]] = field(default_factory=list)
    # Citations the engine attached (to uncited sentences, or in place of a missing source).
    added_citations: list[int] = field(default_factory=list)


class Brain(Protocol):
    """The LLM-backed steps: plan, judge, answer, and the citation check."""

    @property
    def llm_url(self) -> str:
        """The LLM server's base URL (named in errors)."""
        ...

    async def plan(
        self, question: str, history: Sequence[Turn], *, timeout: float
    ) -> Decision[Plan]:
        """Decide clarify / answer from history / search (with an optimised query)."""
        ...

    async def judge(
        self,
        question: str,
        evidence: Sequence[Evidence],
        *,
        stage: Literal["snippets", "chunks"],
        timeout: float,
        boundary: str | None = None,
    ) -> Decision[Judgement]:
        """Judge whether ``evidence`` answers ``question``; suggest gap queries.

        ``boundary``: the run's fence marker (one per run keeps the prompts' prefix shared).
        """
        ...

    def answer(
        self,
        question: str,
        sources: Sequence[Evidence],
        history: Sequence[Turn],
        *,
        timeout: float,
        boundary: str | None = None,
        detail: str | None = None,
    ) -> AsyncIterator[str]:
        """Stream the answer with ``[n]`` citations (n = 1-based index into ``sources``).

        ``detail``: brief | full, or None for the prompt's own length rule.
        """
        ...

    def check(self, answer: str, sources: Sequence[Evidence]) -> Checked:
        """Remove or fix citations the sources do not support."""
        ...


class Searcher(Protocol):
    """A metasearch engine (SearXNG)."""

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
    ) -> SearchResponse:
        """One page of results for ``query``."""
        ...


class Reader(Protocol):
    """Fetches and extracts web pages."""

    async def read(self, url: str, *, timeout: float) -> PageRead:
        """Read ``url`` within ``timeout`` seconds (failures are statuses, not exceptions).

        Raises:
            ReaderUnavailable: the reader itself is down (skip the other URLs).
        """
        ...


class Ranker(Protocol):
    """Orders search results and picks the passages the model sees."""

    async def rank_results(
        self, query: str, hits: Sequence[SearchHit], *, top_k: int, timeout: float
    ) -> list[SearchHit]:
        """``hits`` reranked (deduplicated by URL), best first, at most ``top_k``.

        Raises:
            RankerUnavailable: the call failed (the loop keeps the engine order).
        """
        ...

    async def rank_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        budget_tokens: int,
        passage_words: int,
        timeout: float,
    ) -> list[Passage]:
        """Passages of ``pages`` for ``queries`` (question first), best first, within
        ``budget_tokens`` (estimated as characters / 4).

        Raises:
            RankerUnavailable: the call failed (the loop keeps page order).
        """
        ...

    async def rank_chunks(
        self, query: str, pages: Sequence[PageText], *, top_k: int, timeout: float
    ) -> list[Passage]:
        """The best ``top_k`` passages over ``pages``, one per URL.

        Raises:
            RankerUnavailable: the call failed (the loop keeps page order).
        """
        ...


class StoredText(Protocol):
    """A local document's stored text."""

    @property
    def title(self) -> str: ...
    @property
    def markdown(self) -> str: ...


class Corpus(Protocol):
    """The local documents' index."""

    async def search(self, query: str, *, top_k: int, timeout: float) -> list[SearchHit]:
        """The best documents for ``query`` as hits with ``source="local"``.

        Raises:
            CorpusError: the index could not be searched.
        """
        ...

    async def get(self, doc_id: str, *, timeout: float) -> StoredText | None:
        """A document's stored text, or None when the index does not know it.

        Raises:
            CorpusError: the index could not be asked.
        """
        ...
