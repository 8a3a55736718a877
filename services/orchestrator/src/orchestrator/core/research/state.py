"""A research run's state: what it found and wrote so far. Persisted as JSON after each step."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from orchestrator.core.ask.fusion import origin_of

Mode = Literal["deep-research", "due-diligence"]
Status = Literal["queued", "running", "completed", "cancelled", "interrupted", "failed"]
Phase = Literal["scope", "plan_review", "research", "evaluate", "synthesis"]
FINISHED: frozenset[str] = frozenset({"completed", "cancelled", "interrupted", "failed"})
# How much of a passage is kept per source (for the report prompts and the citation check).
PASSAGE_CHARS = 1500
EXCERPT_CHARS = 300


class Dimension(BaseModel):
    """One research dimension."""

    id: str
    title: str
    status: Literal["pending", "running", "done", "skipped"] = "pending"
    iterations: int = 0
    added_by: Literal["scope", "user", "evaluation"] = "scope"


class Finding(BaseModel):
    """A dimension's compressed finding; ``sources`` are numbers in the run's source list."""

    dimension: str
    title: str
    summary: str
    key_finding: str
    sources: list[int] = Field(default_factory=list)


class Source(BaseModel):
    """One numbered source of the run; ``text`` is the passage the report may cite."""

    n: int
    url: str
    title: str
    text: str
    origin: str = "web"

    def public(self) -> dict[str, Any]:
        """As the API shows it (the passage cut to an excerpt)."""
        text = " ".join(self.text.split())
        excerpt = text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"
        return {
            "n": self.n,
            "url": self.url,
            "title": self.title,
            "excerpt": excerpt,
            "origin": self.origin,
        }


class Section(BaseModel):
    """A written report section (its body's citations checked)."""

    key: str
    title: str
    body: str


class Counters(BaseModel):
    """What the run has spent and gathered."""

    searches: int = 0
    sources: int = 0
    pages_read: int = 0
    llm_calls: int = 0
    iterations: int = 0


class ResearchState(BaseModel):
    """Everything a run accumulates; enough to resume it from its last completed phase."""

    sources_opt: list[str] = Field(default_factory=lambda: ["web"])
    # The request's domain rules and the query's site: operators (DomainPolicy.request_rules).
    domains_opt: dict[str, list[str]] = Field(default_factory=dict)
    # What the domain policy dropped: the `policy` events' entries, tagged with the dimension.
    policy_dropped: list[dict[str, Any]] = Field(default_factory=list)
    brief: str = ""
    scoped: bool = False
    reviewed: bool = False
    evaluation_done: bool = False
    completed_phase: str | None = None
    dimensions: list[Dimension] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    evaluations: list[dict[str, Any]] = Field(default_factory=list)
    sections: list[Section] = Field(default_factory=list)
    draft_title: str = ""
    draft: str = ""
    report: str = ""
    cited: list[int] = Field(default_factory=list)
    removed_citations: list[int] = Field(default_factory=list)
    counters: Counters = Field(default_factory=Counters)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    warnings: list[dict[str, Any]] = Field(default_factory=list)
    error: dict[str, Any] | None = None
    # The run's call record for its bundle (orchestrator/core/exports/recorder.py), compressed;
    # written when the run ends, never shown by the API's views.
    recording: str = ""

    def add_dimension(
        self, title: str, added_by: Literal["scope", "user", "evaluation"]
    ) -> Dimension:
        """Append a dimension with the next id."""
        dim = Dimension(id=f"d{len(self.dimensions) + 1}", title=title, added_by=added_by)
        self.dimensions.append(dim)
        return dim

    def pending(self) -> list[Dimension]:
        """Dimensions without a finding yet (never started, or cut off by a restart)."""
        done = {f.dimension for f in self.findings}
        return [d for d in self.dimensions if d.id not in done and d.status != "skipped"]

    def add_source(self, url: str, title: str, text: str) -> int:
        """The source's number in the run's list (numbered on first sight)."""
        for src in self.sources:
            if src.url == url:
                return src.n
        n = len(self.sources) + 1
        self.sources.append(
            Source(n=n, url=url, title=title, text=text[:PASSAGE_CHARS], origin=origin_of(url))
        )
        self.counters.sources = len(self.sources)
        return n

    def source(self, n: int) -> Source:
        """Source number ``n``."""
        return self.sources[n - 1]

    def report_so_far(self, query: str) -> str:
        """The final report, else the sections written so far plus the one being written."""
        if self.report:
            return self.report
        if not self.sections and not self.draft_title:
            return ""
        parts = [f"# {query}\n"]
        parts += [f"## {s.title}\n\n{s.body.strip()}\n" for s in self.sections]
        if self.draft_title:
            parts.append(f"## {self.draft_title}\n\n{self.draft.strip()}\n")
        return "\n".join(parts)
