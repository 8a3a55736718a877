"""A stored `make eval` run (its ``--json`` file) read back as outcomes, so one invocation can
print a committed baseline beside the run it just made (``--baseline FILE``).

The file keeps each outcome's verdicts (page and passage hit), not the page and evidence
texts, so a stored outcome answers with those; its question is today's question of that id
(an id no longer in the sets is dropped, and said so).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.eval.metrics import Outcome
from bench.eval.questions import Question


@dataclass
class StoredOutcome(Outcome):
    """An outcome read from a run's JSON: its hits as they were measured."""

    stored_page_hit: bool = False
    stored_passage_hit: bool = False
    stored_evidence_chars: int = 0

    @property
    def page_hit(self) -> bool:
        """Every answer pattern occurred in the pages read (as measured)."""
        return self.stored_page_hit

    @property
    def passage_hit(self) -> bool:
        """Every answer pattern occurred in the evidence (as measured)."""
        return self.stored_passage_hit

    @property
    def evidence_chars(self) -> int:
        """Characters of evidence the synthesis call was given (as measured)."""
        return self.stored_evidence_chars


@dataclass(frozen=True)
class StoredRun:
    """A stored run: where it was measured, and its outcomes."""

    commit: str
    date: str
    outcomes: list[Outcome]
    dropped: int  # outcomes whose question id is no longer in the sets


def _outcome(row: dict[str, Any], q: Question, prefix: str) -> StoredOutcome:
    return StoredOutcome(
        q,
        prefix + str(row["config"]),
        status=str(row["status"]),
        error=str(row.get("error", "")),
        pages_read=int(row["pages_read"]),
        searched=list(row.get("searched", [])),
        cited=list(row["sources"]),
        local_sources=int(row.get("local_sources", 0)),
        answer=str(row.get("answer", "")),
        timings_ms={k: float(v) for k, v in row.get("timings_ms", {}).items()},
        duration_ms=float(row["duration_ms"]),
        stored_page_hit=bool(row["page_hit"]),
        stored_passage_hit=bool(row["passage_hit"]),
        stored_evidence_chars=int(row.get("evidence_chars", 0)),
    )


def load_run(path: Path, questions: Sequence[Question], prefix: str = "base ") -> StoredRun:
    """The run stored at ``path`` (a --json file, or the .partial.jsonl of a run still going
    or stopped), its configurations renamed ``prefix`` + name."""
    text = path.read_text("utf-8")
    raw: dict[str, Any]
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        raw = {"commit": "?", "date": "partial", "outcomes": rows}
    else:
        raw = json.loads(text)
    by_id = {q.id: q for q in questions}
    rows = raw["outcomes"]
    outcomes: list[Outcome] = [
        _outcome(r, by_id[r["id"]], prefix) for r in rows if r["id"] in by_id
    ]
    return StoredRun(str(raw["commit"]), str(raw["date"]), outcomes, len(rows) - len(outcomes))
