"""Grading a real model's answers (`make eval --llm ...`; pure: no I/O).

Each answer is *right* (every answer pattern of its question occurs in it: the ``says``
pattern where the page pattern is written for page text), *abstained* (it
says the sources do not hold the answer: ABSTAIN), or *wrong*; a wrong answer that carries a
citation marker is *confidently wrong*. For an unanswerable question only abstaining is right.
An answer that *opens* by abstaining is abstained even when the pattern occurs later: the
engine's "The sources don't say." followed by the model's unsupported answer, labelled as such,
is not a right answer (until 2026-11-27's fourth session it was graded right).
Two defects are counted on every answer: cut off mid-sentence, and a ``[n]`` marker spliced
into a word or a code span.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bench.eval.metrics import Outcome

Verdict = Literal["right", "abstained", "wrong"]

# "The sources don't say", in the ways a model says it (checked on the embedded model's output).
# Quoted text is left out first: a quoted page may say "no default" without the answer doing so.
ABSTAIN = re.compile(
    r"\b(sources?|documents?|pages?|results?|context|passages?|documentation|manual|text)\b"
    r"[^.,;:]{0,40}?\b(do(es)? not|don'?t|doesn'?t|did not|didn'?t|never)\b[^.,;:]{0,40}?"
    r"\b(say|mention|state|contain|include|cover|provide|specify|answer|give|describe|address"
    r"|list|define|discuss|information|details?|data)"
    r"|\bnone of the (sources|documents|pages|results|passages)\b"
    r"|\b(no|not enough|insufficient) (relevant |specific )?(information|mention|details?)\b"
    r"|\b(cannot|can'?t|could not|couldn'?t|unable to|not able to) (be )?(find|found|determine"
    r"|answer|tell|confirm|provide|locate|identify)"
    r"|\bnot (explicitly )?(mentioned|stated|specified|covered|found|documented|provided|listed)"
    r"|\b(isn'?t|is not|aren'?t|are not) (mentioned|stated|specified|covered|documented|listed)"
    r"|\bI (do not|don'?t) know\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')
CITATION = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")
_TRAILING_CITES = re.compile(r"(\s*\[\d+(?:\s*,\s*\d+)*\])+\s*$")
_SENTENCE_END = tuple(".!?:;)\"'`*]>")
_CODE_SPAN = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_IN_WORD = re.compile(r"\w\[\d+\]\w")
# Up to the first full stop that ends a sentence (not one inside "2.4" or "e.g.").
_FIRST_SENTENCE = re.compile(r".+?(?:[.!?](?=\s|$)|$)", re.DOTALL)


def cited(answer: str) -> bool:
    """Whether the answer carries a citation marker."""
    return CITATION.search(answer) is not None


def abstains(answer: str) -> bool:
    """Whether the answer says its sources do not hold the answer (outside quotations)."""
    return ABSTAIN.search(_QUOTED.sub(" ", answer)) is not None


def opens_abstaining(answer: str) -> bool:
    """Whether the answer's first sentence says its sources do not hold the answer."""
    first = _FIRST_SENTENCE.match(answer.strip())
    return first is not None and abstains(first.group(0))


def verdict(o: Outcome) -> Verdict:
    """Right, abstained or wrong; for a question without an answer, only abstaining is right."""
    if not o.question.answerable:
        return "right" if abstains(o.answer) else "wrong"
    if opens_abstaining(o.answer):
        return "abstained"
    if o.question.said_in(o.answer):
        return "right"
    return "abstained" if abstains(o.answer) else "wrong"


def cut_off(answer: str) -> bool:
    """Whether the answer stops mid-sentence (its last sentence has no end, citations aside)."""
    text = _TRAILING_CITES.sub("", answer.rstrip()).rstrip()
    return bool(text) and not text.endswith(_SENTENCE_END)


def marker_inside(answer: str) -> bool:
    """Whether a ``[n]`` marker sits inside a word or a code span."""
    if _IN_WORD.search(answer):
        return True
    return any(CITATION.search(span) for span in _CODE_SPAN.findall(answer))


@dataclass(frozen=True)
class AnswerRow:
    """One line of the answer table: a configuration over one role and kind."""

    config: str
    group: str  # "tuning", "held-out" or "local"
    kind: str
    n: int
    right: float
    abstained: float
    wrong: float
    confidently_wrong: float
    cut_off: int
    marker_inside: int
    p50_s: float


def answer_row(config: str, group: str, kind: str, outcomes: Sequence[Outcome]) -> AnswerRow:
    """Aggregate one configuration's outcomes of one role and kind."""
    n = len(outcomes) or 1
    verdicts = [verdict(o) for o in outcomes]
    wrong = [o for o, v in zip(outcomes, verdicts, strict=True) if v == "wrong"]
    return AnswerRow(
        config=config,
        group=group,
        kind=kind,
        n=len(outcomes),
        right=verdicts.count("right") / n,
        abstained=verdicts.count("abstained") / n,
        wrong=len(wrong) / n,
        confidently_wrong=sum(cited(o.answer) for o in wrong) / n,
        cut_off=sum(cut_off(o.answer) for o in outcomes),
        marker_inside=sum(marker_inside(o.answer) for o in outcomes),
        p50_s=statistics.median([o.duration_ms for o in outcomes]) / 1000 if outcomes else 0.0,
    )


def format_answers(rows: Sequence[AnswerRow]) -> str:
    """The answer rows as a fixed-width table. For unanswerable questions `right` is the
    abstention rate; for off-topic ones (local corpus) the fall-through table says more."""
    head = (
        f"{'configuration':18} {'sets':8} {'kind':12} {'n':>3} {'right%':>7} {'abst%':>6} "
        f"{'wrong%':>7} {'conf.wrong%':>11} {'cut':>4} {'[n]in':>5} {'p50 s':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.config:18} {r.group:8} {r.kind:12} {r.n:3d} {r.right * 100:7.1f} "
            f"{r.abstained * 100:6.1f} {r.wrong * 100:7.1f} {r.confidently_wrong * 100:11.1f} "
            f"{r.cut_off:4d} {r.marker_inside:5d} {r.p50_s:6.1f}"
        )
    return "\n".join(lines)
