"""Whether a passage supports an answer sentence: a score in [0, 1] and a label.

No entailment (NLI) model ships inside a PyPI package with a usable licence (docs/rerank.md),
so the score is a logistic blend of four cheap checks, each aimed at how a small model gets a
cited sentence wrong, taken at the passage's *best unit*: of the few sentence units (and
neighbour pairs) sharing most of the sentence's words and values, the one scoring highest.
Until 2026-11-27's fourth session the best unit was the one nearest by cosine alone: in a
source of many entries that was often a neighbouring entry, and a right answer ("the default
value of gc.autoPackLimit is 50", copied from the page) scored 0.17, unsupported.

- *meaning*: the cosine between the sentence and the unit (all-MiniLM-L6-v2, as the reranker
  uses it);
- *values*: the share of the sentence's exact tokens -- numbers, versions, identifiers,
  flags, ALL-CAPS names, calls -- that occur in the best unit, and in the whole passage (an
  embedding reads "port 8080" and "port 50053" alike; this does not; and a version that the
  passage gives for another change is not in the unit that matches the sentence);
- *words*: the share of the sentence's content words (crudely stemmed) in the best unit:
  "faster" for "slower", "case-sensitive" for "case-independent", a claim from elsewhere;
- *polarity*: a negation in the sentence or in its best unit, but not in both.

Before any of these, the sentence loses the words that say where it was read ("According to
the Postfix manual,", ", as stated in the documentation": ``claim_core``), and the *words*
check skips a reference entry's frame ("default", "value"): "the default value of
`hopcount_limit` is 50" copied from a postconf entry "hopcount_limit (50)" shared a sixth of its
words with it and scored 0.25, struck; 2026-11-27's seventh session, on the stored embedded tuning
answers (bench/eval/replay.py), 2 more right answers were kept and no wrong one came back.

The weights were fitted (logistic regression) and the two label thresholds chosen on the
"tune" half of a labelled set (bench/support; ``python -m bench.support.eval_support --fit``);
the other half reports precision and recall. Thread-safe; CPU-bound.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from quarry_rerank.reranker import Embeds
from quarry_rerank.sentences import units

# Logistic weights: bias, meaning, values in the best unit, values in the passage, words in
# the best unit, polarity (bench/support, tune half).
WEIGHTS = (-8.95, 2.33, 3.91, 2.12, 2.54, -0.53)
# Units of a passage scored against a sentence: the lexical shortlist (see candidates()).
CANDIDATE_UNITS = 6
# Label thresholds on the score, chosen on the tune half.
SUPPORTED_AT = 0.675
PARTLY_AT = 0.2

_VALUE = re.compile(
    r"(?<![\w-])(?:--?[a-z][\w-]*|\d[\d,.]*\d|\d|[a-z_]*[_./][\w./-]*\w|\w+\(\))",
    re.IGNORECASE,
)
_CAPS = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")
_WORD = re.compile(r"[a-z][a-z0-9_]+")
_NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|can't|won't|doesn't|don't|isn't|aren't|without|none|neither|nor"
    r"|refuses?)\b",
    re.IGNORECASE,
)
# How a sentence names where it read a fact ("According to the Postfix manual,", ", as stated
# in the documentation", a trailing "in the Postfix manual"): not part of the claim, and words
# no passage holds (see claim_core). A value named on the way ("as specified in the
# `message_size_limit` parameter") stops the match: that is a claim.
_ATTRIBUTION = re.compile(
    r"^\s*according to [^,]{0,80},\s*"
    r"|,?\s*(?:as )?(?:specified|stated|described|documented|mentioned|noted|shown|explained"
    r"|defined|listed)\s+(?:in|by)\s+(?:the\s+)?(?:[^,.;`]{0,60}?\s)?"
    r"(?:manual|documentation|docs|source|sources|page|reference|man page)(?:\s+\d+)?\b"
    r"|\s+in the [\w -]{0,30}?(?:manual|documentation)(?=\s*[.;]?\s*$)",
    re.IGNORECASE,
)
# Words of a reference entry's frame, not of its content: "the default value of X is 50" says
# what "X (50)" or "Default: X 50" says in a postconf list or a directive table, which hold
# neither "default" nor "value" beside the number.
_FRAME = frozenset(
    ["default", "defaults", "value", "values", "setting", "settings", "according", "manual"]
)
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "which",
        "who",
        "what",
        "when",
        "where",
        "how",
        "can",
        "may",
        "might",
        "must",
        "should",
        "would",
        "will",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "not",
        "no",
        "than",
        "then",
        "there",
        "their",
        "they",
        "them",
        "also",
        "any",
        "all",
        "each",
        "every",
        "such",
        "into",
        "only",
        "so",
        "if",
    ]
)


@dataclass(frozen=True)
class Verdict:
    """One sentence against one passage."""

    score: float
    label: str  # "supported", "partly" or "unsupported"


def _norm(token: str) -> str:
    return token.lower().replace(",", "").rstrip(".")


def values(text: str) -> set[str]:
    """The exact tokens of ``text`` that a paraphrase must keep (numbers, identifiers...)."""
    found = {_norm(m.group(0)) for m in _VALUE.finditer(text)}
    found |= {m.group(0).lower() for m in _CAPS.finditer(text)}
    return {v for v in found if v}


def _stems(text: str) -> set[str]:
    words = _WORD.findall(text.lower())
    return {w.removesuffix("s")[:5] for w in words if w not in _STOP and w not in _FRAME}


def claim_core(sentence: str) -> str:
    """``sentence`` without the words that say where it was read ("According to the manual,",
    ", as specified in the manual"), which no passage holds; the claim itself if that is all."""
    core = re.sub(r"\s+([.;!?])", r"\1", _ATTRIBUTION.sub(" ", sentence)).strip()
    return core if len(core.split()) >= 3 else sentence


def _share(wanted: set[str], have: set[str]) -> float:
    return sum(v in have for v in wanted) / len(wanted) if wanted else 1.0


def _tokens(text: str) -> set[str]:
    return values(text) | set(re.findall(r"[\w.-]+", text.lower().replace(",", "")))


def features(sentence: str, passage: str, best_unit: str, similarity: float) -> list[float]:
    """meaning; values in the best unit and in the whole passage; words in the best unit;
    polarity (see the module docstring)."""
    wanted = values(sentence)
    polarity = bool(_NEGATION.search(sentence)) != bool(_NEGATION.search(best_unit))
    return [
        similarity,
        _share(wanted, _tokens(best_unit)),
        _share(wanted, _tokens(passage)),
        _share(_stems(sentence), _stems(best_unit)),
        float(polarity),
    ]


def blend(feats: Sequence[float], weights: Sequence[float] = WEIGHTS) -> float:
    """The logistic score of a feature vector."""
    z = weights[0] + sum(w * f for w, f in zip(weights[1:], feats, strict=True))
    return 1.0 / (1.0 + math.exp(-z))


def label_for(score: float) -> str:
    """The label of a support score (module thresholds)."""
    if score >= SUPPORTED_AT:
        return "supported"
    return "partly" if score >= PARTLY_AT else "unsupported"


class SupportChecker:
    """Scores sentences against the passages they cite; see the module docstring."""

    def __init__(self, embedder: Embeds) -> None:
        """Use ``embedder`` (a cached one: a passage's units are embedded once)."""
        self._embedder = embedder

    def support(self, sentence: str, passage: str) -> float:
        """How well ``passage`` supports ``sentence``, in [0, 1]."""
        return self.support_many([(sentence, passage)])[0]

    def check(self, sentence: str, passage: str) -> Verdict:
        """The score and its label."""
        score = self.support(sentence, passage)
        return Verdict(score, label_for(score))

    def support_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One score per (sentence, passage) pair, batched through the embedder."""
        return [blend(f) for f in self.features_many(pairs)]

    def features_many(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        """The feature vector of each pair (what :func:`blend` weighs): the best-scoring of
        the passage's units that share the most words and values with the sentence."""
        if not pairs:
            return []
        pairs = [(claim_core(s), p) for s, p in pairs]
        per_pair = [candidates(s, units(p) or [p]) for s, p in pairs]
        flat = [u for us in per_pair for u in us]
        sent_vecs = self._embedder.embed([s for s, _ in pairs])
        unit_vecs = self._embedder.embed(flat)
        out: list[list[float]] = []
        start = 0
        for k, ((sentence, passage), us) in enumerate(zip(pairs, per_pair, strict=True)):
            sims = unit_vecs[start : start + len(us)] @ sent_vecs[k]
            start += len(us)
            pairs_ = zip(us, sims, strict=True)
            scored = [features(sentence, passage, u, float(sim)) for u, sim in pairs_]
            out.append(max(scored, key=blend))
        return out


def candidates(sentence: str, unit_texts: Sequence[str], keep: int = CANDIDATE_UNITS) -> list[str]:
    """The ``keep`` units sharing the most of ``sentence``'s values and words, in order.

    Why not every unit: a source of a few thousand characters has ~80 units (sentences and
    neighbour pairs), and embedding them all for each answer cost 4 s for 20 sentence-passage
    pairs on 2 cores, past the orchestrator's 3 s budget for the whole check; a unit that
    supports a sentence shares its words, so the lexical shortlist loses none that matter.
    """
    if len(unit_texts) <= keep:
        return list(unit_texts)
    wanted, stems = values(sentence), _stems(sentence)

    def overlap(unit: str) -> float:
        return 2 * _share(wanted, _tokens(unit)) + _share(stems, _stems(unit))

    best = sorted(range(len(unit_texts)), key=lambda i: -overlap(unit_texts[i]))[:keep]
    return [unit_texts[i] for i in sorted(best)]
