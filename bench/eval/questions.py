"""The `make eval` question sets: loading, validation and answer matching.

questions.yaml holds the first tuning sets' questions (sqlite, git), tuning-*.yaml one more
tuning set each (postfix, zsh: the held-out style, long reference pages), heldout-*.yaml one
held-out set each (bench/eval/docweb.py says which set is which), unanswerable.yaml questions
about the held-out sets and unanswerable-tuning.yaml questions about the tuning sets that the doc
web cannot answer, and offtopic.yaml questions the local corpus (Quarry's own docs) cannot
answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

HERE = Path(__file__).parent
QUESTIONS_FILE = HERE / "questions.yaml"
FILES = (
    QUESTIONS_FILE,
    HERE / "tuning-postfix.yaml",
    HERE / "tuning-zsh.yaml",
    HERE / "heldout-apache.yaml",
    HERE / "heldout-ffmpeg.yaml",
    HERE / "unanswerable.yaml",
    HERE / "unanswerable-tuning.yaml",
    HERE / "offtopic.yaml",
)
Kind = Literal["snippet", "deep", "two_page", "unanswerable", "offtopic"]
# Kinds with an answer in the doc web; the others are proven absent (bench/eval/check.py).
KINDS: tuple[Kind, ...] = ("snippet", "deep", "two_page")
NO_ANSWER: tuple[Kind, ...] = ("unanswerable", "offtopic")
# The set of an off-topic question: the local corpus, Quarry's own README and docs/.
LOCAL_SET = "local"

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
    # The fact as a model's answer states it, where ``answer`` is written for the page's
    # wording ("default value is 50" where an answer says "gc.autoPackLimit is 50").
    says: str = ""

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
    set: str = ""  # the doc set asked about (docweb.SETS), or LOCAL_SET
    # No-answer kinds: patterns any answer would need, proven absent from the corpus.
    absent: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        """Whether the corpus holds the answer (the kind is not a no-answer one)."""
        return self.kind in KINDS

    @property
    def gold(self) -> tuple[str, ...]:
        """Every gold page path, in order, without repeats."""
        return tuple(dict.fromkeys(g for p in self.parts for g in p.gold))

    def answered_by(self, text: str) -> bool:
        """Whether every part's pattern occurs in ``text``."""
        clean = normalise(text)
        return bool(self.parts) and all(
            re.search(p.answer, clean, re.IGNORECASE) for p in self.parts
        )

    def said_in(self, answer: str) -> bool:
        """Whether a model's ``answer`` states every part (``says``, else the page pattern)."""
        clean = normalise(answer)
        return bool(self.parts) and all(
            re.search(p.says or p.answer, clean, re.IGNORECASE) for p in self.parts
        )

    def missing_in(self, text: str) -> list[Part]:
        """The parts whose pattern does not occur in ``text``."""
        return [p for p in self.parts if not p.found_in(text)]

    def present_in(self, text: str, *, normalised: bool = False) -> list[str]:
        """The ``absent`` patterns that do occur in ``text`` (a no-answer question's problem);
        ``normalised``: ``text`` went through normalise() already (a corpus checked often)."""
        clean = text if normalised else normalise(text)
        return [a for a in self.absent if re.search(a, clean, re.IGNORECASE)]

    def gold_covered(self, paths: Sequence[str]) -> bool:
        """Whether, for every part, one of its gold pages is among ``paths``."""
        seen = set(paths)
        return all(seen.intersection(p.gold) for p in self.parts)


def parse_question(raw: dict[str, Any]) -> Question:
    """One question from its YAML mapping; raises ValueError when it is malformed."""
    kind = raw.get("kind")
    if kind in NO_ANSWER:
        return _parse_no_answer(raw, kind)
    if "parts" in raw:
        parts = tuple(
            Part(
                str(p["answer"]), tuple(p["gold"]), str(p.get("gap_query", "")),
                str(p.get("says", "")),
            )
            for p in raw["parts"]
        )  # fmt: skip
    else:
        gold = tuple(raw["gold"])
        says = [str(x) for x in raw.get("says", [])] or [""] * len(raw["answers"])
        if len(says) != len(raw["answers"]):
            raise ValueError(f"{raw.get('id')}: `says` needs one pattern per answer")
        parts = tuple(Part(str(a), gold, "", x) for a, x in zip(raw["answers"], says, strict=True))
    if kind not in KINDS:
        raise ValueError(f"{raw.get('id')}: kind must be one of {KINDS}, not {kind!r}")
    for part in parts:
        re.compile(part.answer)
        re.compile(part.says)
    gold_set = parts[0].gold[0].strip("/").split("/")[0]
    return Question(str(raw["id"]), kind, str(raw["question"]), parts, gold_set)


def _parse_no_answer(raw: dict[str, Any], kind: Kind) -> Question:
    absent = tuple(str(a) for a in raw.get("absent", ()))
    if not absent:
        raise ValueError(f"{raw.get('id')}: an {kind} question needs `absent` patterns")
    for pattern in absent:
        re.compile(pattern)
    where = str(raw.get("set", LOCAL_SET if kind == "offtopic" else ""))
    if not where:
        raise ValueError(f"{raw.get('id')}: an unanswerable question needs its `set`")
    return Question(str(raw["id"]), kind, str(raw["question"]), (), where, absent)


def load(paths: Sequence[Path] = FILES) -> list[Question]:
    """Every question of ``paths``; raises ValueError on a malformed entry or a repeated id."""
    questions = [
        parse_question(raw)
        for path in paths
        for raw in yaml.safe_load(path.read_text("utf-8")) or []
    ]
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError("question ids repeat")
    return questions


def interleave(questions: Sequence[Question]) -> list[Question]:
    """``questions`` taken round-robin over their (set, kind) groups, each group in order: a
    run stopped part way has measured a bit of every set and kind."""
    groups: dict[tuple[str, str], list[Question]] = {}
    for q in questions:
        groups.setdefault((q.set, q.kind), []).append(q)
    lanes = list(groups.values())
    longest = max((len(lane) for lane in lanes), default=0)
    return [lane[i] for i in range(longest) for lane in lanes if i < len(lane)]
