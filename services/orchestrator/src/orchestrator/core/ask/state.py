"""Per-run state: options, dependencies, evidence gathered so far, timings and stage spans."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from opentelemetry import trace

from orchestrator.config import CHARS_PER_TOKEN, HISTORY_RESERVE_TOKENS, Settings
from orchestrator.core.ask import evidence, versions
from orchestrator.core.ask.domain import Evidence, PageRead, Passage, SearchHit
from orchestrator.core.ask.modes import PROFILES, Mode, ModeProfile, resolve_mode
from orchestrator.core.ask.ports import Brain, Corpus, Ranker, Reader, Searcher
from orchestrator.core.ask.toolports import DocumentLister, ToolProbe
from orchestrator.core.budget import Deadline
from orchestrator.core.domains import DomainPolicy
from orchestrator.core.events import EventSink
from orchestrator.core.llm import ToolCaller
from orchestrator.core.prompts import MAX_SOURCE_CHARS, new_boundary
from orchestrator.core.ready import ReadyGate
from orchestrator.core.sessions import Turn

tracer = trace.get_tracer(__name__)


@dataclass(frozen=True)
class RunOptions:
    """Per-request knobs; None means "the setting's default"."""

    max_rounds: int | None = None
    prefetch: bool | None = None
    categories: str | None = None
    language: str | None = None
    time_range: str | None = None
    # Where to search: "web" (SearXNG) and/or "local" (the corpus in the ranker).
    sources: tuple[str, ...] = ("web",)
    # Answer from the model alone when search fails (None: ORCHESTRATOR_ALLOW_UNSOURCED).
    allow_unsourced: bool | None = None
    # False: skip the search-result cache for this request.
    search_cache: bool | None = None
    # speed | balanced | quality (core/ask/modes.py); None: ORCHESTRATOR_MODE.
    mode: Mode | None = None
    # Answer length: brief | full; None: the prompt's own rule (short for a bare fact).
    detail: str | None = None
    # Local documents: only ids starting with ``scope`` (a pinned folder or file) and, when
    # given, one of ``visible`` (the caller's own documents; empty: all of them).
    scope: str = ""
    visible: tuple[str, ...] = ()
    # The agent mode: off | on | auto (core/ask/agentic.py); None: ORCHESTRATOR_AGENT.
    agent: str | None = None
    # Which domains the web results may come from (orchestrator/core/domains.py; empty: any).
    domains: DomainPolicy = field(default_factory=DomainPolicy)
    # SearXNG engines to ask (checked names; empty: the instance's defaults) and the page.
    engines: tuple[str, ...] = ()
    pageno: int = 1


@dataclass(frozen=True)
class Deps:
    """The long-lived collaborators a run uses (built once in the app's lifespan)."""

    settings: Settings
    brain: Brain
    searcher: Searcher
    reader: Reader
    ranker: Ranker
    # The index service (local documents); None when the app has none wired.
    corpus: Corpus | None = None
    # Whether the LLM server has loaded its model; None: assume it has (tests, no probe).
    llm_gate: ReadyGate | None = None
    # The agent mode's model with tools, the document list and the probe's memory (None: the
    # agent mode is unavailable and every question takes the pipeline).
    tools_llm: ToolCaller | None = None
    documents: DocumentLister | None = None
    tool_probe: ToolProbe | None = None


@dataclass
class RunState:
    """Everything one run accumulates; owned by the run's task."""

    question: str
    history: list[Turn]
    options: RunOptions
    deps: Deps
    sink: EventSink
    deadline: Deadline
    rounds: int = 0
    hits: list[SearchHit] = field(default_factory=list)
    seen_urls: set[str] = field(default_factory=set)
    pages: dict[str, PageRead] = field(default_factory=dict)
    attempted: set[str] = field(default_factory=set)
    chunks: list[Passage] = field(default_factory=list)
    # Local documents among the kept results (never read: the index serves their passages),
    # and the passages the index returned while searching, by (document, position).
    local_docs: dict[str, None] = field(default_factory=dict)
    local_passages: dict[tuple[str, int], Passage] = field(default_factory=dict)
    # What passages are ranked against: the question, the planner's rewrite, gap queries.
    queries: list[str] = field(default_factory=list)
    # The parts of a question that asks two things (core/ask/expand.py sub_questions): each
    # is searched and ranks results and passages beside the whole question.
    parts: list[str] = field(default_factory=list)
    reader_down: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)
    # LLM calls made (planner, judges, answer): what a mode changes.
    llm_calls: int = 0
    # What the domain policy dropped (core/ask/sieve.py): the `policy` events' entries.
    policy_dropped: list[dict[str, Any]] = field(default_factory=list)
    # One fence marker for all of a run's prompts, so they share a prefix the LLM server can
    # keep in its KV cache (a fresh marker per call would change the prompt at its start).
    boundary: str = field(default_factory=new_boundary)

    @property
    def settings(self) -> Settings:
        """The app's settings."""
        return self.deps.settings

    @property
    def mode(self) -> Mode:
        """The run's mode: the request's, else ORCHESTRATOR_MODE (auto follows the LLM)."""
        cfg = self.settings
        return resolve_mode(self.options.mode, cfg.mode, embedded_llm=cfg.llm_embedded)

    @property
    def profile(self) -> ModeProfile:
        """What the run's mode allows."""
        return PROFILES[self.mode]

    @property
    def top_urls(self) -> int:
        """Result URLs kept per round (the mode's, else the setting; the mode's
        ``parts_top_urls`` for a question asking two things)."""
        if self.parts and self.profile.parts_top_urls:
            return self.profile.parts_top_urls
        return self.profile.top_urls or self.settings.top_urls

    @property
    def evidence_sources(self) -> int:
        """Passages ranked for the judge and the answer (the mode's, else the setting)."""
        return self.profile.evidence_sources or self.settings.chunk_top_k

    @property
    def max_rounds(self) -> int:
        """Rounds allowed: the request option, else the mode's, else the setting."""
        return self.options.max_rounds or self.profile.max_rounds or self.settings.max_rounds

    @property
    def prefetch(self) -> bool:
        """Whether reads start while the snippet judge runs."""
        if self.options.prefetch is None:
            return self.settings.prefetch
        return self.options.prefetch

    @property
    def allow_unsourced(self) -> bool:
        """Whether a run whose search failed may answer from the model alone."""
        if self.options.allow_unsourced is None:
            return self.settings.allow_unsourced
        return self.options.allow_unsourced

    def research_left(self, cap: float = float("inf")) -> float:
        """Timeout for a research call: ``cap`` or less, keeping the synthesis reserve."""
        return self.deadline.timeout(cap, reserve=self.settings.synthesis_reserve_s)

    @property
    def has_material(self) -> bool:
        """True once there is something to rank passages over: pages read or local documents."""
        return bool(self.pages) or bool(self.local_docs)

    def remember_local(self, passages: Sequence[Passage]) -> None:
        """Keep the index's passages seen while searching (the fallback if it fails later)."""
        for p in passages:
            self.local_passages.setdefault((p.url, p.index), p)

    def snippets(self, limit: int) -> list[Evidence]:
        """The best search snippets gathered so far, as evidence."""
        return self.snippet_evidence(self.hits[:limit])

    def snippet_evidence(self, hits: Sequence[SearchHit]) -> list[Evidence]:
        """``hits``' snippets as evidence; a local PDF's with the pages of the passages its
        snippet came from, so it is cited by page."""
        pages: dict[str, set[int]] = {}
        for (url, _), p in self.local_passages.items():
            if p.page:
                pages.setdefault(url, set()).add(p.page)
        return [
            Evidence(
                h.url, h.title, h.snippet, "snippet", pages=tuple(sorted(pages.get(h.url, ())))
            )
            for h in hits
        ]

    def add_queries(self, queries: list[str]) -> None:
        """Remember queries the passages should answer (first seen first)."""
        for q in queries:
            if q.strip() and q not in self.queries:
                self.queries.append(q)

    def kept_snippets(self) -> list[SearchHit]:
        """The snippets kept as evidence beside passages (none for chunk_per_url)."""
        if self.settings.evidence != "passages":
            return []
        count = self.profile.evidence_snippets
        kept = evidence.snippets_for(
            self.hits, self.settings.evidence_snippets if count is None else count
        )
        return [self._completed(h) for h in kept]

    def _completed(self, hit: SearchHit) -> SearchHit:
        """``hit`` with its snippet finished from the page's own text when the page was read
        and the snippet stops mid-sentence (evidence.complete_snippet)."""
        page = self.pages.get(hit.url)
        if page is None:
            return hit
        done = evidence.complete_snippet(hit.snippet, page.markdown)
        return hit if done == hit.snippet.strip() else replace(hit, snippet=done)

    def evidence_budget(self) -> int:
        """Tokens of evidence for this run: the setting's budget, capped by the mode's (which
        grows by the mode's ``parts_budget`` for a question asking two things: each part ranks
        passages for its share, core/ask/read.py)."""
        total = self.settings.evidence_budget_tokens()
        cap = self.profile.evidence_tokens
        if cap and self.parts:
            cap = int(cap * self.profile.parts_budget)
        return min(total, cap) if cap else total

    def passage_budget(self) -> int:
        """Tokens left for passages once the kept snippets are counted."""
        left = self.evidence_budget() - evidence.snippet_tokens(self.kept_snippets())
        # A history longer than the prompt reserve counts on takes its tokens from the evidence.
        history = sum(len(t.question) + len(t.answer) for t in self.history) // CHARS_PER_TOKEN
        left -= max(0, history - HISTORY_RESERVE_TOKENS)
        return max(evidence.MIN_PASSAGE_TOKENS, left)

    def chunk_evidence(self) -> list[Evidence]:
        """The ranked passages (with the best snippets), as evidence."""
        if self.settings.evidence == "chunk_per_url":
            return evidence.chunk_per_url(self.chunks)
        if not self.chunks:
            return []
        found = evidence.from_passages(self.chunks, self.kept_snippets())
        return versions.current_first(found, self.question)

    def best_evidence(self) -> list[Evidence]:
        """Chunks when any page was read, else snippets."""
        return self.chunk_evidence() or self.snippets(self.top_urls)

    def clip(self, items: Sequence[Evidence]) -> list[Evidence]:
        """``items`` as the LLM sees them: each within the whole evidence budget, and a chunk
        or snippet within the mode's per-source size. Ranked passages are not cut per source:
        the ranker already fitted them to the budget by rank, and a per-source cut would drop
        a page's later passages (where deep answers are). A cut keeps a source's best text
        and its ``passages`` exactly what remains (evidence.fit); a release note's title says
        so, and which version it describes (core/ask/versions.py)."""
        whole = min(self.evidence_budget() * CHARS_PER_TOKEN, MAX_SOURCE_CHARS)
        per_source = self.profile.source_chars or whole
        return [
            evidence.fit(
                versions.labelled(e), whole if e.kind == "passages" else min(whole, per_source)
            )
            for e in items
        ]

    @contextmanager
    def stage(self, name: str, **attributes: Any) -> Iterator[trace.Span]:
        """Time a stage (summed over rounds) inside a span named ``agent.<name>``."""
        start = time.perf_counter()
        attrs = {"ae.round": self.rounds, **{f"ae.{k}": v for k, v in attributes.items()}}
        with tracer.start_as_current_span(f"agent.{name}", attributes=attrs) as span:
            try:
                yield span
            finally:
                ms = (time.perf_counter() - start) * 1000
                self.timings_ms[name] = round(self.timings_ms.get(name, 0.0) + ms, 1)
