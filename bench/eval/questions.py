"""The `make eval` question set (questions.yaml): loading, validation and answer matching."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

QUESTIONS_FILE = Path(__file__).with_name("questions.yaml")
Kind = Literal["snippet", "deep", "two_page"]
KINDS: tuple[Kind, ...] = ("snippet", "deep", "two_page")

# The reader's markdown escapes punctuation (sqlite\\_sequence) and marks code with backticks;
# neither is part of the fact, and a model's answer carries neither.
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")


def normalise(text: str) -> str:
    """``text`` without markdown escapes and code backticks, for matching answer patterns."""
    return _ESCAPED.sub(r"\1", text).replace("`", "")


@dataclass(frozen=True)
class Part:
    """One fact a question needs: a regex for it, the pages holding it, the query for it."""

    answer: str
    gold: tuple[str, ...]
    gap_query: str = ""

    def found_in(self, text: str) -> bool:
        """Whether the fact's pattern occurs in ``text``."""
        return re.search(self.answer, normalise(text), re.IGNORECASE) is not None


@dataclass(frozen=True)
class Question:
    """A question; single-page kinds have one part per pattern, all with the same gold pages."""

    id: str
    kind: Kind
    question: str
    parts: tuple[Part, ...]

    @property
    def gold(self) -> tuple[str, ...]:
        """Every gold page path, in order, without repeats."""
        return tuple(dict.fromkeys(g for p in self.parts for g in p.gold))

    def answered_by(self, text: str) -> bool:
        """Whether every part's pattern occurs in ``text``."""
        clean = normalise(text)
        return all(re.search(p.answer, clean, re.IGNORECASE) for p in self.parts)

    def missing_in(self, text: str) -> list[Part]:
        """The parts whose pattern does not occur in ``text``."""
        return [p for p in self.parts if not p.found_in(text)]

    def gold_covered(self, paths: Sequence[str]) -> bool:
        """Whether, for every part, one of its gold pages is among ``paths``."""
        seen = set(paths)
        return all(seen.intersection(p.gold) for p in self.parts)


def _parse(raw: dict[str, Any]) -> Question:
    kind = raw.get("kind")
    if "parts" in raw:
        parts = tuple(
            Part(str(p["answer"]), tuple(p["gold"]), str(p.get("gap_query", "")))
            for p in raw["parts"]
        )
    else:
        gold = tuple(raw["gold"])
        parts = tuple(Part(str(a), gold) for a in raw["answers"])
    if kind not in KINDS:
        raise ValueError(f"{raw.get('id')}: kind must be one of {KINDS}, not {kind!r}")
    for part in parts:
        re.compile(part.answer)
    return Question(str(raw["id"]), kind, str(raw["question"]), parts)


def load(path: Path = QUESTIONS_FILE) -> list[Question]:
    """Every question of ``path``; raises ValueError on a malformed entry or a repeated id."""
    questions = [_parse(raw) for raw in yaml.safe_load(path.read_text("utf-8"))]
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError("question ids repeat")
    return questions
