"""Per-question outcomes of an eval run and the table of metrics per configuration and kind
(pure: no I/O)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.eval.questions import KINDS, Question

STAGES = ("search", "judge", "read", "chunks", "synthesis")


@dataclass
class Outcome:
    """What one run of one question under one configuration produced."""

    question: Question
    config: str
    status: str = ""
    error: str = ""  # the run's error event, if any
    page_text: str = ""  # every page read, joined
    pages_read: int = 0
    evidence: str = ""  # the synthesis prompt's sources, exactly
    searched: list[str] = field(default_factory=list)  # result paths kept after reranking
    cited: list[str] = field(default_factory=list)  # source paths given to the model
    local_sources: int = 0  # of those, local documents (not the doc web)
    answer: str = ""
    support_score: float | None = None  # the answer's share of supported sentences, if checked
    sentences: list[dict[str, Any]] = field(default_factory=list)  # each sentence's support mark
    draft: str = ""  # the real model's answer as it wrote it (--llm), before any checking
    timings_ms: dict[str, float] = field(default_factory=dict)
    duration_ms: float = 0.0

    @property
    def page_hit(self) -> bool:
        """Every answer pattern occurs in the pages read."""
        return self.question.answered_by(self.page_text)

    @property
    def passage_hit(self) -> bool:
        """Every answer pattern occurs in the evidence given to the synthesis call."""
        return self.question.answered_by(self.evidence)

    @property
    def evidence_chars(self) -> int:
        """Characters of evidence the synthesis call was given."""
        return len(self.evidence)

    @property
    def fell_through(self) -> bool:
        """No local document was given to the model (an off-topic question's right outcome)."""
        return self.local_sources == 0


@dataclass(frozen=True)
class Row:
    """One line of the table: a configuration over one kind (or all) of question."""

    config: str
    kind: str
    n: int
    page_recall: float | None
    passage_recall: float
    gold_search: float
    gold_sources: float
    evidence_chars: float
    stage_p50_ms: dict[str, float]
    total_p50_ms: float
    answer_accuracy: float | None = None

    @property
    def retention(self) -> float | None:
        """Passage recall over page recall: how much of what was read reached the model."""
        if not self.page_recall:
            return None
        return self.passage_recall / self.page_recall


def _mean(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _p50(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def row(config: str, kind: str, outcomes: Sequence[Outcome], *, answers: bool = False) -> Row:
    """Aggregate ``outcomes`` (one configuration, one kind)."""
    read_any = any(o.pages_read for o in outcomes)
    return Row(
        config=config,
        kind=kind,
        n=len(outcomes),
        page_recall=_mean([o.page_hit for o in outcomes]) if read_any else None,
        passage_recall=_mean([o.passage_hit for o in outcomes]),
        gold_search=_mean([o.question.gold_covered(o.searched) for o in outcomes]),
        gold_sources=_mean([o.question.gold_covered(o.cited) for o in outcomes]),
        evidence_chars=_p50([o.evidence_chars for o in outcomes]),
        stage_p50_ms={s: _p50([o.timings_ms.get(s, 0.0) for o in outcomes]) for s in STAGES},
        total_p50_ms=_p50([o.duration_ms for o in outcomes]),
        answer_accuracy=(
            _mean([o.question.said_in(o.answer) for o in outcomes]) if answers else None
        ),
    )


def table_rows(
    outcomes: Sequence[Outcome], configs: Sequence[str], *, answers: bool = False
) -> list[Row]:
    """Rows per kind then per configuration (configurations side by side), then overall."""
    rows = []
    full = {o.config for o in outcomes if o.question.kind != "two_page"}
    for kind in (*KINDS, "all"):
        for config in configs:
            if kind == "all" and config not in full:
                continue  # a two-page-only variant has its rows under two_page
            mine = [o for o in outcomes if o.config == config and kind in ("all", o.question.kind)]
            if mine:
                rows.append(row(config, kind, mine, answers=answers))
    return rows


def _pct(value: float | None) -> str:
    return "    -" if value is None else f"{value * 100:5.1f}"


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a fixed-width text table (percentages; latencies as p50 ms)."""
    answers = any(r.answer_accuracy is not None for r in rows)
    head = (
        f"{'kind':9} {'configuration':24} {'n':>3} {'page%':>6} {'pass%':>6} {'ret%':>6} "
        f"{'gold@search':>11} {'gold@src':>8} {'ev.chars':>8} "
        + " ".join(f"{s[:6]:>6}" for s in STAGES)
        + f" {'total':>6}"
        + (f" {'answer%':>7}" if answers else "")
    )
    lines = [head, "-" * len(head)]
    last = ""
    for r in rows:
        if r.kind != last and last:
            lines.append("")
        last = r.kind
        line = (
            f"{r.kind:9} {r.config:24} {r.n:3d} {_pct(r.page_recall):>6} "
            f"{_pct(r.passage_recall):>6} {_pct(r.retention):>6} {_pct(r.gold_search):>11} "
            f"{_pct(r.gold_sources):>8} {r.evidence_chars:8.0f} "
            + " ".join(f"{r.stage_p50_ms[s]:6.0f}" for s in STAGES)
            + f" {r.total_p50_ms:6.0f}"
        )
        if answers:
            line += f" {_pct(r.answer_accuracy):>7}"
        lines.append(line)
    return "\n".join(lines)
