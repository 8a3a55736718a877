"""What the agent loop needs from the LLM, search, the reader, the ranker and the corpus.

Narrow protocols over the domain values of :mod:`orchestrator.core.ask.domain`; the adapters in
``orchestrator.adapters.grpc`` implement them over HTTP and gRPC, the loop's unit tests in process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from orchestrator.core.ask.domain import (
    Evidence,
    LocalPassages,
    PageRead,
    PageText,
    Passage,
    SearchHit,
    SearchResponse,
    SupportVerdict,
)
from orchestrator.core.schemas import Judgement, Plan
from orchestrator.core.sessions import Turn

T = TypeVar("T")


@dataclass(frozen=True)
class Decision(Generic[T]):
    """A structured LLM call's outcome; ``used_default`` when the output was never valid."""

    value: T
    used_default: bool = False
    attempts: int = 1
    # The call ran past LLM_TIMEOUT_S: ``value`` is the safe default and the run goes on.
    timed_out: bool = False


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

    def converse(
        self,
        question: str,
        history: Sequence[Turn],
        *,
        purpose: Literal["unsourced", "conversation"],
        timeout: float,
    ) -> AsyncIterator[str]:
        """Stream an answer without sources: from the model's own knowledge ("unsourced") or
        about the conversation itself (greetings, thanks, "what did I ask?")."""
        ...

    def check(self, answer: str, sources: Sequence[Evidence]) -> Checked:
        """Remove or fix citations the sources do not support."""
        ...


class Searcher(Protocol):
    """Web search (SearXNG instances and/or the Brave Search API, see
    orchestrator.adapters.search)."""

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        engines: Sequence[str] | None = None,
        pageno: int = 1,
        cache: bool = True,
    ) -> SearchResponse:
        """One page (``pageno``, 1-based) of results for ``query`` from ``engines`` (SearXNG's
        names; None: the instance's defaults); ``cache``: a recent identical search may answer."""
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

    async def prepare_passages(
        self,
        queries: Sequence[str],
        pages: Sequence[PageText],
        *,
        passage_words: int,
        timeout: float,
    ) -> None:
        """Ahead of ``rank_passages`` (best effort): split ``pages`` and embed their likely
        passages for ``queries``; cancelling it keeps what was done.

        Raises:
            RankerUnavailable: the call failed (rank_passages does the work instead).
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

    async def check_support(
        self, claims: Sequence[tuple[str, Sequence[str]]], *, timeout: float
    ) -> list[SupportVerdict]:
        """One verdict per (sentence, cited passages' texts), in order: the support model's
        score of the passage that backs the sentence best.

        Raises:
            RankerUnavailable: the call failed (the answer keeps its lexical marks).
        """
        ...


class Corpus(Protocol):
    """The local documents' index: passages already chunked (and embedded) at commit time."""

    async def search_passages(
        self,
        queries: Sequence[str],
        *,
        top_k: int,
        timeout: float,
        max_per_document: int = 3,
        id_prefix: str = "",
        id_prefixes: Sequence[str] = (),
    ) -> LocalPassages:
        """The best passages for ``queries`` (question first), every query's BM25 and dense
        rankings fused by RRF; ``url`` of each passage is its document id (``local:...``).

        Raises:
            CorpusError: the index could not be searched.
        """
        ...
