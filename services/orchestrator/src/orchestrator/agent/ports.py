"""What the agent loop needs from the LLM side and from search, as narrow protocols."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from orchestrator.clients.searxng_types import SearchResponse
from orchestrator.schemas import Judgement, Plan
from orchestrator.sessions import Turn

T = TypeVar("T")


@dataclass(frozen=True)
class Evidence:
    """One source the LLM sees: a snippet, a ranked chunk, or an earlier answer's source."""

    url: str
    title: str
    text: str
    kind: str = "chunk"
    # When the page says it was published (ISO date, as the search backend gave it), if known.
    published: str = ""


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
    ) -> Decision[Judgement]:
        """Judge whether ``evidence`` answers ``question``; suggest gap queries."""
        ...

    def answer(
        self,
        question: str,
        sources: Sequence[Evidence],
        history: Sequence[Turn],
        *,
        timeout: float,
    ) -> AsyncIterator[str]:
        """Stream the answer with ``[n]`` citations (n = 1-based index into ``sources``)."""
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
    """Web search (SearXNG instances and/or the Brave Search API, see orchestrator.search)."""

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        cache: bool = True,
    ) -> SearchResponse:
        """One page of results for ``query`` (``cache``: a recent identical search may answer)."""
        ...
