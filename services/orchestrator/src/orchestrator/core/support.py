"""Sentence-level support: each sentence of an answer against the passages it cites.

The citation check (``orchestrator/core/citations.py``) fixes *which* source a sentence cites; this
module says *how well* that source backs the sentence, and is what every face shows:

* ``supported``: the cited passage holds the claim (lexical score ≥ ``SUPPORTED_AT``);
* ``partly``: it holds part of it (≥ ``PARTLY_AT``, the citation check's own threshold);
* ``unsupported``: no cited passage holds it — such a sentence is never shown as cited;
  a claim the model cited nothing for is checked against every source and, when one
  supports it, marked ``supported`` and cited to it;
* ``None``: the sentence carries no claim to check ("Here is what I found:", "Yes [1].").

The score is the share of the claim's content words found in the passage (the citation check's
measure, so a citation the check kept is at least ``partly``), capped by the claim's *values*
(numbers, versions, flags, dotted or underscored names, calls, ALL-CAPS names: the tokens a
paraphrase keeps, read as libs/rerank's support checker reads them) that the passage lacks:
below ``partly`` when half of them or more are missing ("port 8080" against a page that says
50053 is the confidently wrong answer a small model writes), at ``partly`` when fewer are. On
the labelled set (bench/support, 151 pairs), the cap raised the share of unsupported sentences
marked so from 3 % to 32 % on its tune half (13 % to 32 % on the test half, precision 0.57 to
0.71), supported precision 0.64 to 0.67; ``python -m bench.support.eval_support`` prints both
beside libs/rerank's blended checker. On the hand-made cases of tests/unit/test_support.py,
sentences copied or closely paraphrased from a passage score 0.86 to 1.0, and those that keep
the topic but change a value or an entity 0.56 to 0.62; ``SUPPORTED_AT`` 0.75 sits between. A
paraphrase in new words scores low (0.67 for one case there): lexical overlap cannot see it.

How an answer whose claims are unsupported ends (the engine saying the sources don't say) is
orchestrator/core/ending.py's. Pure: no I/O.

``SentenceStream`` cuts a streamed answer into complete sentences as they arrive, so faces that
cannot take text back (a terminal pipe, an OpenAI-compatible stream) print checked sentences.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from orchestrator.core.citations import (
    MIN_WORDS,
    SUPPORT_THRESHOLD,
    cited_numbers,
    claim_text,
    claim_words,
    content_words,
    sentence_spans,
    strip_citations,
    support,
)

Support = Literal["supported", "partly", "unsupported"]
SUPPORTED_AT = 0.75
PARTLY_AT = SUPPORT_THRESHOLD
# A lexical score this high (every content word and value of the claim in the cited passage)
# is never struck by the support model, only doubted: "partly".
LEXICAL_SURE = 0.95
# A support-model score below this strikes a sentence's citations even when its label is
# "partly" (the label's own bound is 0.2): on the first 31 answerable questions of an embedded
# tuning run, cited wrong answers 19.4 % -> 9.7 %, right 77.4 % -> 71.0 % (bench/eval/replay.py).
MODEL_CITES_AT = 0.4
# Fewer content words than this: no claim to check.
MIN_CLAIM_WORDS = MIN_WORDS + 1
# Where a claim's missing values cap its score (see the module doc).
UNSUPPORTED_CAP = PARTLY_AT - 0.01
# Each of two sources holding half of a two-fact sentence holds at least this share of its
# words ("SQLITE_MAX_LENGTH is 2 billion" against a git page's "2 weeks" holds a third).
HALF_AT = 0.4
# Added to a claim's word share when the source holds every one of its values (see _score).
VALUES_BONUS = 0.1
PARTLY_CAP = PARTLY_AT + (SUPPORTED_AT - PARTLY_AT) / 2
# A value: a flag, a number or version, a dotted/underscored/slashed name, a call.
VALUE_RE = re.compile(
    r"(?<![\w-])(?:--?[a-z][\w-]*|\d[\d,.]*\d|\d|[a-z_]*[_./][\w./-]*\w|\w+\(\))",
    re.IGNORECASE,
)
# An ALL-CAPS name ("WHIP", "SQLITE_MAX_LENGTH") and a camelCase one ("H3MaxStreams"); the
# patterns are shared with core/ending.py (a question's names) and core/entries.py (an entry's).
CAPS = r"[A-Z][A-Z0-9_]{2,}"
CAMEL = r"[A-Za-z]\w*[a-z0-9][A-Z]\w*"
CAPS_RE = re.compile(rf"\b{CAPS}\b")
CAMEL_RE = re.compile(rf"\b{CAMEL}")
# Where a two-fact sentence joins its facts: ", and " or "; ".
_CLAUSE_CUT = re.compile(r",\s+and\s+|;\s+")
# Where a citation goes in a sentence: before its closing punctuation and trailing space.
_SENTENCE_TAIL = re.compile(r"[.!?]*\s*$")


@dataclass(frozen=True)
class SentenceMark:
    """One sentence as shown: its text (citations dropped when unsupported), what it cites."""

    text: str
    citations: list[int]
    support: Support | None
    score: float
    # A two-fact sentence supported clause by clause: each clause's claim and the sources it
    # was cited to (what the support model then checks, clause by clause).
    clauses: tuple[tuple[str, tuple[int, ...]], ...] = field(default=(), compare=False)

    def as_dict(self) -> dict[str, Any]:
        """As the `answer.sentence` / `answer.completed` events carry it."""
        return {
            "text": self.text,
            "citations": self.citations,
            "support": self.support,
            "score": round(self.score, 3),
        }


def mark_sentence(sentence: str, sources: Mapping[int, str]) -> SentenceMark:
    """Mark one (citation-checked) sentence against the sources it cites."""
    claim = claim_words(sentence)
    cites = [n for n in cited_numbers(sentence) if n in sources]
    if len(claim) < MIN_CLAIM_WORDS:
        return SentenceMark(sentence, cites, None, 0.0)
    stated = values(claim_text(sentence))
    if not cited_numbers(sentence):
        return _elsewhere(sentence, claim, stated, sources)
    score = max((_score(claim, stated, sources[n]) for n in cites), default=0.0)
    if len(cites) > 1 and score < SUPPORTED_AT:
        # Two facts from two pages in one sentence, each page citing half of it.
        score = max(score, _score(claim, stated, "\n".join(sources[n] for n in cites)))
    if score < SUPPORTED_AT:
        # The model (or the citation check) cited the wrong page for a claim another page
        # holds: cite that one instead, as for a claim cited to nothing.
        found = _elsewhere(strip_citations(sentence), claim, stated, sources)
        if found.support == "supported":
            return found
    if score >= SUPPORTED_AT:
        return SentenceMark(sentence, cites, "supported", score)
    if score >= PARTLY_AT:
        return SentenceMark(sentence, cites, "partly", score)
    text = strip_citations(sentence) if cites else sentence
    return SentenceMark(text, [], "unsupported", score)


def _uncited(
    sentence: str, claim: set[str], stated: set[str], sources: Mapping[int, str]
) -> SentenceMark:
    """A claim the model cited nothing for: supported when a source supports it (and then
    cited to that source, as the mark says), else unsupported. The embedded model often
    writes a right sentence without a marker; calling it unsupported would put "the sources
    don't say" over a right answer."""
    scored = [(_score(claim, stated, text), [n]) for n, text in sources.items()]
    score, best = max(scored, key=_first_best, default=(0.0, []))
    if score < SUPPORTED_AT and len(stated) > 1:
        # "Exit code 125 makes bisect skip a commit, and --no-verify bypasses the hook": two
        # facts, two pages; only the two together hold every value.
        joined = [
            (_score(claim, stated, f"{sources[a]}\n{sources[b]}"), [a, b])
            for a, b in itertools.combinations(sorted(sources), 2)
            if _halves(claim, stated, sources[a], sources[b])
        ]
        score, best = max([(score, best), *joined], key=_first_best)
    if score < SUPPORTED_AT:
        return SentenceMark(sentence, [], "unsupported", score)
    end = _SENTENCE_TAIL.search(sentence)
    at = end.start() if end else len(sentence)
    markers = "".join(f"[{n}]" for n in best)
    cited = f"{sentence[:at]} {markers}{sentence[at:]}"
    return SentenceMark(cited, best, "supported", score)


def _elsewhere(
    sentence: str, claim: set[str], stated: set[str], sources: Mapping[int, str]
) -> SentenceMark:
    """The sentence cited to the source(s) that support it, whole or clause by clause; else
    unsupported and uncited."""
    found = _uncited(sentence, claim, stated, sources)
    if found.support == "supported":
        return found
    return _by_clauses(sentence, sources) or found


def _by_clauses(sentence: str, sources: Mapping[int, str]) -> SentenceMark | None:
    """A two-fact sentence ("X is 500, and the newest stash is stash@{0}") whose two clauses
    are each supported by a source, cited clause by clause; None unless both are. The model
    often cites one source for both facts, or none, and the sentence as a whole matches
    neither page well enough."""
    body = strip_citations(sentence)
    cut = _CLAUSE_CUT.search(body)
    if cut is None:
        return None
    halves = [body[: cut.start()], body[cut.end() :]]
    marks = []
    for half in halves:
        claim = claim_words(half)
        if len(claim) < MIN_CLAIM_WORDS:
            return None
        mark = _uncited(half, claim, values(claim_text(half)), sources)
        if mark.support != "supported":
            return None
        marks.append(mark)
    first, second = marks
    return SentenceMark(
        text=f"{first.text}{cut.group(0)}{second.text}",
        citations=list(dict.fromkeys([*first.citations, *second.citations])),
        support="supported",
        score=min(first.score, second.score),
        clauses=tuple((claim_text(m.text), tuple(m.citations)) for m in marks),
    )


def _halves(claim: set[str], stated: set[str], one: str, other: str) -> bool:
    """Whether each text holds part of the claim (its words, before the value cap) and a value
    the other lacks: two halves of one two-fact sentence, not one page and a stray number."""
    a, b = _plain(one), _plain(other)
    only_a = any(v in a and v not in b for v in stated)
    only_b = any(v in b and v not in a for v in stated)
    words_a = support(claim, content_words(one))
    words_b = support(claim, content_words(other))
    return only_a and only_b and min(words_a, words_b) >= HALF_AT


def _first_best(item: tuple[float, list[int]]) -> tuple[float, list[int]]:
    """Highest score first; on a tie, the fewest and lowest-numbered sources."""
    score, numbers = item
    return score, [-len(numbers), *(-n for n in numbers)]


def values(text: str) -> set[str]:
    """The exact tokens of ``text`` a paraphrase must keep (numbers, versions, flags, dotted or
    underscored names, calls, ALL-CAPS names), lower-cased, thousands separators dropped."""
    found = {_plain(m.group(0)).rstrip(".") for m in VALUE_RE.finditer(text)}
    found |= {m.group(0).lower() for m in CAPS_RE.finditer(text)}
    return {v for v in found if v}


def _plain(text: str) -> str:
    return text.lower().replace(",", "").replace("\\", "")


def _score(claim: set[str], stated: set[str], source: str) -> float:
    """The share of the claim's words in the source, capped by the claim's values the source
    lacks: a copied sentence with another value ("2 million" where the page says "1 billion")
    shares every other word, and is exactly the answer that must not pass; raised a little
    when the source holds every value."""
    score = support(claim, content_words(source))
    if stated:
        text = _plain(source)
        missing = sum(v not in text for v in stated)
        if missing * 2 >= len(stated):
            score = min(score, UNSUPPORTED_CAP)
        elif missing:
            score = min(score, PARTLY_CAP)
        else:
            # Every value is there: the words a model adds around them ("as specified in the
            # parameter") weigh less. On the labelled set this raised lexical supported recall
            # 0.83 -> 0.90 (test half) and left the wired marks unchanged: the model decides.
            score = min(1.0, score + VALUES_BONUS)
    return score


# A CheckSupport call's bounds (services/ranker support_rpc): claims per call, passages each.
MODEL_MAX_CLAIMS = 64
MODEL_MAX_PASSAGES = 8
_LABELS: tuple[Support, ...] = ("supported", "partly", "unsupported")


def model_claims(
    marks: Sequence[SentenceMark], sources: Mapping[int, str]
) -> list[tuple[int, str, list[str]]]:
    """The sentences the support model re-scores: (index in ``marks``, sentence without its
    markers, its cited passages' texts and, when it cites several, all of them joined). Only
    cited sentences the lexical check did not find unsupported: those were streamed uncited
    already and stay so."""
    out = []
    for i, m in enumerate(marks):
        if m.support not in ("supported", "partly"):
            continue
        # A sentence supported clause by clause is checked clause by clause.
        parts = m.clauses or ((claim_text(m.text), tuple(m.citations)),)
        for text, numbers in parts:
            cited = [sources[n] for n in numbers if n in sources][: MODEL_MAX_PASSAGES - 1]
            if len(cited) > 1:  # two facts from two pages: only together do they hold both
                cited.append("\n".join(cited))
            if cited:
                out.append((i, text, cited))
    return out[:MODEL_MAX_CLAIMS]


def with_model_marks(
    marks: Sequence[SentenceMark],
    claims: Sequence[tuple[int, str, list[str]]],
    verdicts: Sequence[tuple[float, str]],
) -> list[SentenceMark]:
    """``marks`` with the support model's (score, label) for each of ``claims``: its label
    replaces the lexical one, and a sentence it scores below ``MODEL_CITES_AT`` loses its
    citations (unsupported) -- unless every word and value of it is in the cited passage
    (``LEXICAL_SURE``): then it stays cited, ``partly``.

    Why the model's label, but never over a lexical "unsupported": on the labelled set's tune
    half (bench/support) this pairing had the best macro-F1 (0.62 vs lexical 0.53, model
    alone 0.60); on the test half supported precision 0.83 vs 0.67 (recall 0.66 vs 0.83).
    ``python -m bench.support.eval_support`` prints today's numbers ("wired")."""
    weakest: dict[int, tuple[float, str]] = {}  # a sentence checked clause by clause: its weaker
    for (i, _, _), (score, label) in zip(claims, verdicts, strict=True):
        if label in _LABELS and (i not in weakest or score < weakest[i][0]):
            weakest[i] = (score, label)
    out = list(marks)
    for i, (score, label) in weakest.items():
        m = marks[i]
        if label != "supported" and m.score >= LEXICAL_SURE:
            # Every word and value of the claim is in the cited passage: the model may doubt
            # it (a value far from its name in a long entry), not strike it -- whether its
            # score fell below the label's bound or only below MODEL_CITES_AT.
            out[i] = SentenceMark(m.text, m.citations, "partly", score)
        elif label == "unsupported" or score < MODEL_CITES_AT:
            out[i] = SentenceMark(strip_citations(m.text), [], "unsupported", score)
        else:
            out[i] = SentenceMark(m.text, m.citations, cast(Support, label), score)
    return out


@dataclass
class SupportReport:
    """Every sentence's mark and the answer's support score (share of claims supported)."""

    sentences: list[SentenceMark] = field(default_factory=list)

    @property
    def claims(self) -> list[SentenceMark]:
        """The sentences that carry a claim."""
        return [s for s in self.sentences if s.support is not None]

    @property
    def score(self) -> float | None:
        """Supported claims / claims (None: no claim at all)."""
        claims = self.claims
        if not claims:
            return None
        return sum(s.support == "supported" for s in claims) / len(claims)

    @property
    def unsupported(self) -> bool:
        """Claims were made and not one is even partly supported."""
        claims = self.claims
        return bool(claims) and all(s.support == "unsupported" for s in claims)

    def as_event(self) -> dict[str, Any]:
        """The `answer.completed` fields: ``sentences`` and ``support_score``."""
        score = self.score
        return {
            "sentences": [s.as_dict() for s in self.sentences],
            "support_score": None if score is None else round(score, 3),
        }


class SentenceStream:
    """Cuts a streamed text into complete sentences: a sentence is complete once text that is
    not its own trailing citation follows it (so "… 3.5" or "fact. [1]" is never cut early)."""

    def __init__(self) -> None:
        self._text = ""
        self._done = 0

    def feed(self, delta: str) -> list[str]:
        """Add ``delta``; the sentences it completed."""
        self._text += delta
        spans = sentence_spans(self._text[self._done :])
        complete = spans[:-1]
        out = [self._text[self._done + a : self._done + b] for a, b in complete]
        if complete:
            self._done += complete[-1][1]
        return out

    def flush(self) -> list[str]:
        """The rest, at the end of the stream."""
        rest = self._text[self._done :]
        self._done = len(self._text)
        return [rest] if rest else []
