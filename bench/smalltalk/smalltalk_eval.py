"""Score small-talk detectors on the labelled evaluation set (bench/smalltalk/messages.yaml).

Shared by the bench script (the table) and the floor test in ``make test``
(tests/eval/test_smalltalk_floor.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

MESSAGES = Path(__file__).with_name("messages.yaml")
SMALL_TALK = ("greeting", "thanks", "goodbye", "conversation")

Detector = Callable[[str], str | None]


@dataclass(frozen=True)
class Labelled:
    """One evaluation message and what Quarry should do with it."""

    text: str
    label: str  # "question" or one of SMALL_TALK

    @property
    def small_talk(self) -> bool:
        """True when it needs no search."""
        return self.label != "question"


@dataclass
class Score:
    """What one detector did with the labelled set."""

    name: str
    small_talk: int = 0  # small-talk messages recognised as small talk
    small_talk_total: int = 0
    questions_lost: int = 0  # real questions taken for small talk (never searched)
    questions_total: int = 0
    lost: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        """Share of the small-talk messages handled as small talk."""
        return self.small_talk / self.small_talk_total if self.small_talk_total else 0.0


def load(path: Path = MESSAGES) -> list[Labelled]:
    """The labelled messages, in file order.

    Raises:
        ValueError: a label is unknown.
        TypeError: an entry is not a string (YAML read "a: b" as a mapping).
    """
    data = yaml.safe_load(path.read_text("utf-8"))
    out = []
    for label, texts in data.items():
        if label != "question" and label not in SMALL_TALK:
            raise ValueError(f"{path}: unknown label {label!r}")
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"{path}: {label}: {text!r} is not a string (quote it)")
            out.append(Labelled(text, label))
    return out


def score(name: str, detect: Detector, messages: list[Labelled]) -> Score:
    """Run ``detect`` (message → small-talk kind or None) over ``messages``."""
    result = Score(name)
    for m in messages:
        found = detect(m.text) is not None
        if m.small_talk:
            result.small_talk_total += 1
            result.small_talk += found
            if not found:
                result.missed.append(m.text)
        else:
            result.questions_total += 1
            result.questions_lost += found
            if found:
                result.lost.append(m.text)
    return result


def table(scores: list[Score]) -> str:
    """A Markdown table: small talk recognised and real questions lost, one row per detector."""
    lines = [
        "| detector | small talk handled as small talk | recall | real questions lost |",
        "|---|---|---|---|",
    ]
    for s in scores:
        lines.append(
            f"| {s.name} | {s.small_talk} / {s.small_talk_total} | {s.recall:.0%} "
            f"| {s.questions_lost} / {s.questions_total} |"
        )
    return "\n".join(lines)
