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
