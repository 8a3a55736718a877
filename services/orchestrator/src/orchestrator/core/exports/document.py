"""What every export format is made from: a report, a conversation or one answer as one
``Document`` — parts (Markdown with ``[n]`` citations), each with its numbered sources and the
passages those sources were cited for. Pure: no I/O.

A research report has one part and one source list. A conversation has a part per turn, and
each turn numbers its own sources from 1, so every anchor carries the part's ``prefix``
(``t2-src-3``): a citation always resolves to the source of its own turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from orchestrator.core.research.state import ResearchState
from orchestrator.core.sessions import Session, Turn
from orchestrator.core.store import RunRecord

Kind = Literal["research", "conversation", "answer"]
# A citation as the engine writes it: "[3]" not followed by "(" (that would be a Markdown link).
CITATION = re.compile(r"\[(\d{1,4})\](?!\()")
# The report's own source list: exports show the sources (with passages) themselves.
_SOURCES_HEADING = re.compile(r"^## Sources\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Source:
    """One numbered source of a part: where it is and the passages the answer could cite."""

    n: int
    url: str
    title: str
    origin: str
    passages: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """As the JSON export shows it."""
        return {
            "n": self.n,
            "url": self.url,
            "title": self.title,
            "origin": self.origin,
            "passages": list(self.passages),
        }


@dataclass(frozen=True)
class Part:
    """A report, or one turn of a conversation: a heading (the question), Markdown, sources."""

    heading: str
    body: str
    sources: tuple[Source, ...]
    prefix: str = ""
    status: str = "answered"

    def anchor(self, n: int) -> str:
        """The id source ``n`` of this part has in HTML and PDF."""
        return f"{self.prefix}src-{n}"

    def source(self, n: int) -> Source | None:
        """Source ``n``, or None when the part has none by that number."""
        return next((s for s in self.sources if s.n == n), None)

    def cited(self) -> list[int]:
        """The source numbers the body cites that exist, in order of first citation."""
        seen: dict[int, None] = {}
        for match in CITATION.finditer(self.body):
            n = int(match.group(1))
            if self.source(n) is not None:
                seen.setdefault(n, None)
        return list(seen)


@dataclass(frozen=True)
class Document:
    """Everything an export shows."""

    kind: Kind
    id: str
    title: str
    created_at: float
    parts: tuple[Part, ...]
    markdown: str
    status: str = "completed"
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    warnings: Sequence[Mapping[str, Any]] = ()


def without_source_list(report: str) -> str:
    """The report before its own "## Sources" list (exports give the sources themselves)."""
    match = _SOURCES_HEADING.search(report)
    return report[: match.start()].rstrip() + "\n" if match else report


def from_research(record: RunRecord, state: ResearchState, markdown: str) -> Document:
    """A research run as a document (``markdown``: the report as the Markdown export has it)."""
    sources = tuple(
        Source(s.n, s.url, s.title, s.origin, (s.text,) if s.text else ()) for s in state.sources
    )
    body = without_source_list(state.report_so_far(record.query) or f"# {record.query}\n")
    part = Part(heading="", body=body, sources=sources, status=record.status)
    return Document(
        kind="research",
        id=record.id,
        title=record.query,
        created_at=record.created_at,
        parts=(part,),
        markdown=markdown,
        status=record.status,
        timings_ms=dict(state.timings_ms),
        warnings=list(state.warnings),
    )


def _turn_source(raw: Mapping[str, Any]) -> Source:
    passages = raw.get("passages") or [raw.get("excerpt", "")]
    return Source(
        n=int(raw.get("n", 0)),
        url=str(raw.get("url", "")),
        title=str(raw.get("title", "")),
        origin=str(raw.get("origin", "web")),
        passages=tuple(str(p) for p in passages if str(p).strip()),
    )


def _turn_part(turn: Turn, number: int) -> Part:
    return Part(
        heading=turn.question,
        body=turn.answer,
        sources=tuple(_turn_source(s) for s in turn.sources),
        prefix=f"t{number}-",
        status=turn.status,
    )


def _turn_markdown(part: Part) -> str:
    lines = [f"## {part.heading}", "", part.body.strip(), ""]
    if part.sources:
        lines += ["### Sources", ""]
        lines += [f"[{s.n}] [{s.title or s.url}]({s.url})  " for s in part.sources]
        lines.append("")
    return "\n".join(lines)


def from_session(session: Session, turn: int | None = None) -> Document:
    """A conversation as a document; with ``turn`` (1-based), that one answer only.

    Raises:
        IndexError: the session has no such turn.
    """
    numbered = list(enumerate(session.turns, start=1))
    if turn is not None:
        if not 1 <= turn <= len(numbered):
            raise IndexError(turn)
        numbered = [numbered[turn - 1]]
    parts = tuple(_turn_part(t, number) for number, t in numbered)
    title = session.title or (session.turns[0].question if session.turns else session.id)
    if turn is not None:
        title = parts[0].heading
    markdown = f"# {title}\n\n" + "\n".join(_turn_markdown(p) for p in parts)
    return Document(
        kind="answer" if turn is not None else "conversation",
        id=session.id,
        title=title,
        created_at=session.created,
        parts=parts,
        markdown=markdown,
    )
