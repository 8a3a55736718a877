"""What changed since a schedule's previous run: sources and claims, compared without a model.

A *source* is a URL of the run's source list, compared after light normalisation (scheme and
host case, no fragment, no trailing slash). A *claim* is a sentence of the report that cites a
source ("… [3]."); two runs phrase the same claim differently, so claims match when their word
sets overlap enough (Jaccard over the words, citations and case dropped), which is stable:
the same two reports always give the same section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

HEADING = "What changed since the last run"
# Word-set overlap at which two cited sentences are taken as the same claim.
SAME_CLAIM = 0.6
# At most this many of each list are written into the report (the webhook gets the counts).
SHOWN = 20
_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
# A paragraph break or a list item starts a new block; other line breaks only wrap a sentence.
_BLOCK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_WORD = re.compile(r"\w+")
_HEADING_LINE = re.compile(r"^#{1,6}\s")
_MD_SPECIAL = re.compile(r"([\\\[\]()*_`<>])")


@dataclass(frozen=True)
class SourceRef:
    """A source as the section names it."""

    url: str
    title: str


@dataclass(frozen=True)
class Changes:
    """The difference between a schedule's previous run and its new one."""

    previous_run_id: str | None
    added_sources: list[SourceRef] = field(default_factory=list)
    dropped_sources: list[SourceRef] = field(default_factory=list)
    added_claims: list[str] = field(default_factory=list)
    removed_claims: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Nothing was added or removed."""
        return not (
            self.added_sources or self.dropped_sources or self.added_claims or self.removed_claims
        )

    def as_json(self) -> dict[str, Any]:
        """The changes as the API and the webhook show them."""
        return {
            "previous_run_id": self.previous_run_id,
            "added_sources": [{"url": s.url, "title": s.title} for s in self.added_sources],
            "dropped_sources": [{"url": s.url, "title": s.title} for s in self.dropped_sources],
            "added_claims": self.added_claims,
            "removed_claims": self.removed_claims,
        }


def normal_url(url: str) -> str:
    """The URL compared: lower-case scheme and host, no fragment, no trailing slash."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip()
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def report_body(report: str) -> str:
    """The report's text: no headings, no source list, no earlier "what changed" section."""
    kept: list[str] = []
    skipping = False
    for line in report.splitlines():
        if _HEADING_LINE.match(line):
            title = line.lstrip("#").strip()
            skipping = title in {"Sources", HEADING}
            kept.append("")  # a heading ends a block, and is no claim itself
        elif not skipping:
            kept.append(line)
    return "\n".join(kept)


def claims(report: str) -> list[str]:
    """The report's cited sentences, citations removed, in order, each once."""
    out: dict[str, None] = {}
    blocks = (" ".join(b.split()) for b in _BLOCK.split(report_body(report)))
    for piece in (p for b in blocks for p in _SENTENCE_END.split(b)):
        text = piece.strip()
        if not text or _HEADING_LINE.match(text) or not _CITATION.search(text):
            continue
        bare = " ".join(_CITATION.sub("", text).split()).lstrip("-* ").strip()
        if bare:
            out.setdefault(bare, None)
    return list(out)


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) >= SAME_CLAIM


def _unmatched(ours: Sequence[str], theirs: Sequence[str]) -> list[str]:
    """The claims of ``ours`` that match none of ``theirs``."""
    other = [_words(c) for c in theirs]
    return [c for c in ours if not any(_similar(_words(c), o) for o in other)]


def _by_url(sources: Iterable[SourceRef]) -> dict[str, SourceRef]:
    out: dict[str, SourceRef] = {}
    for s in sources:
        out.setdefault(normal_url(s.url), s)
    return out


def compare(
    previous_run_id: str | None,
    before: tuple[str, Sequence[SourceRef]] | None,
    after: tuple[str, Sequence[SourceRef]],
) -> Changes:
    """The changes from ``before`` (report, sources; None on a first run) to ``after``."""
    if before is None:
        return Changes(previous_run_id)
    old, new = _by_url(before[1]), _by_url(after[1])
    old_claims, new_claims = claims(before[0]), claims(after[0])
    return Changes(
        previous_run_id,
        added_sources=[s for u, s in new.items() if u not in old],
        dropped_sources=[s for u, s in old.items() if u not in new],
        added_claims=_unmatched(new_claims, old_claims),
        removed_claims=_unmatched(old_claims, new_claims),
    )


def _md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _source_lines(sources: Sequence[SourceRef]) -> list[str]:
    lines = [f"- [{_md(s.title or s.url)}](<{s.url.replace('>', '%3E')}>)" for s in sources[:SHOWN]]
    if len(sources) > SHOWN:
        lines.append(f"- … and {len(sources) - SHOWN} more")
    return lines


def _claim_lines(items: Sequence[str]) -> list[str]:
    lines = [f"- {_md(c)}" for c in items[:SHOWN]]
    if len(items) > SHOWN:
        lines.append(f"- … and {len(items) - SHOWN} more")
    return lines


def section(changes: Changes) -> str:
    """The Markdown section added to the new report."""
    lines = [f"## {HEADING}", ""]
    if changes.previous_run_id is None:
        lines.append("This is the schedule's first completed run: nothing to compare with yet.")
        return "\n".join(lines) + "\n"
    if changes.empty:
        lines.append("Nothing changed: the same sources and the same claims as the last run.")
        return "\n".join(lines) + "\n"
    parts = [
        ("New sources", _source_lines(changes.added_sources)),
        ("Dropped sources", _source_lines(changes.dropped_sources)),
        ("New claims", _claim_lines(changes.added_claims)),
        ("Claims no longer made", _claim_lines(changes.removed_claims)),
    ]
    for title, items in parts:
        if items:
            lines += [f"**{title}**", "", *items, ""]
    return "\n".join(lines).rstrip() + "\n"


def with_section(report: str, text: str) -> str:
    """``report`` with ``text`` placed before its source list (at the end when it has none)."""
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if _HEADING_LINE.match(line) and line.lstrip("#").strip() == "Sources":
            head, tail = "\n".join(lines[:i]).rstrip(), "\n".join(lines[i:])
            return f"{head}\n\n{text}\n{tail}\n"
    return f"{report.rstrip()}\n\n{text}"
