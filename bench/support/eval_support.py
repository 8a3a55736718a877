"""The support checker on its labelled set: fitted on one half, precision/recall on the other.

    python -m bench.support.eval_support [--fit]

Pairs (bench/support/pairs.yaml) are split by passage -- passages in file order alternate
between "tune" and "test" -- so no passage is seen on both sides. ``--fit`` fits the logistic
weights on the tune half, then the "supported" threshold (best F0.5: precision first) and the
"partly" one (best macro-F1 over the three labels), and prints them; without it the library's
weights and thresholds are used. Either way both halves are reported.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
LABELS = ("supported", "partly", "unsupported")


@dataclass(frozen=True)
class Pair:
    """One labelled sentence-passage pair."""

    passage_id: str
    sentence: str
    passage: str
    label: str
    split: str


def load_pairs() -> list[Pair]:
    """Every labelled pair, with its split."""
    passages: dict[str, str] = yaml.safe_load((HERE / "passages.yaml").read_text())
    order = {pid: i for i, pid in enumerate(passages)}
    rows = yaml.safe_load((HERE / "pairs.yaml").read_text())
    pairs = []
    for row in rows:
        if row["l"] not in LABELS:
            raise ValueError(f"unknown label {row['l']!r}")
        split = "tune" if order[row["p"]] % 2 == 0 else "test"
        pairs.append(Pair(row["p"], row["s"], passages[row["p"]], row["l"], split))
    return pairs


def labels(scores: Sequence[float], supported_at: float, partly_at: float) -> list[str]:
    """Labels of scores under the two thresholds."""
    return [
        "supported" if s >= supported_at else "partly" if s >= partly_at else "unsupported"
        for s in scores
    ]


def precision_recall(gold: Sequence[str], got: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Per label: (precision, recall); 0 where undefined."""
    out = {}
    for lab in LABELS:
        tp = sum(g == lab and p == lab for g, p in zip(gold, got, strict=True))
        predicted = sum(p == lab for p in got)
        actual = sum(g == lab for g in gold)
        out[lab] = (tp / predicted if predicted else 0.0, tp / actual if actual else 0.0)
    return out


def macro_f1(gold: Sequence[str], got: Sequence[str]) -> float:
    """Mean F1 over the three labels."""
    f1s = [2 * p * r / (p + r) if p + r else 0.0 for p, r in precision_recall(gold, got).values()]
    return sum(f1s) / len(f1s)


def fit(scores: Sequence[float], gold: Sequence[str]) -> tuple[float, float]:
    """The (supported_at, partly_at) grid point with the best macro-F1."""
    grid = [i / 40 for i in range(1, 40)]
    supported_at = max(grid, key=lambda t: (_f_half(gold, scores, t), -abs(t - 0.5)))
    partly_at = max(
        (p for p in grid if p <= supported_at),
        key=lambda p: (macro_f1(gold, labels(scores, supported_at, p)), p),
    )
    return supported_at, partly_at


def _f_half(gold: Sequence[str], scores: Sequence[float], at: float) -> float:
    """F0.5 of "supported": a wrong sentence marked supported costs more than a right one
    left unmarked (the mark is what tells a reader to trust the citation)."""
    tp = sum(g == "supported" and s >= at for g, s in zip(gold, scores, strict=True))
    fp = sum(g != "supported" and s >= at for g, s in zip(gold, scores, strict=True))
    fn = sum(g == "supported" and s < at for g, s in zip(gold, scores, strict=True))
    return 1.25 * tp / (1.25 * tp + 0.25 * fn + fp) if tp else 0.0


def features_all(pairs: Sequence[Pair]) -> list[list[float]]:
    """The checker's feature vector of every pair, from the real model."""
    from quarry_embed import CachedEmbedder, Embedder
    from quarry_rerank.support import SupportChecker

    checker = SupportChecker(CachedEmbedder(Embedder.load(threads=1, batch_size=8)))
    return checker.features_many([(p.sentence, p.passage) for p in pairs])


TARGET = {"supported": 1.0, "partly": 0.5, "unsupported": 0.0}


def fit_weights(feats: Sequence[Sequence[float]], gold: Sequence[str]) -> tuple[float, ...]:
    """Logistic regression (soft target: partly = 0.5; L2 0.001) by Newton's method."""
    import numpy as np

    x = np.hstack([np.ones((len(feats), 1)), np.asarray(feats, dtype=np.float64)])
    y = np.asarray([TARGET[g] for g in gold])
    ridge = 0.001 * len(y) * np.diag([0.0] + [1.0] * (x.shape[1] - 1))
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + ridge @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + ridge
        w -= np.linalg.solve(hess, grad)
    return tuple(round(float(v), 2) for v in w)


def report(gold: Sequence[str], got: Sequence[str], binary: bool = True) -> str:
    """The precision/recall table, plus "supported vs not" (what the UI's mark hinges on)."""
    lines = [f"{'label':12} {'n':>4} {'precision':>9} {'recall':>7}"]
    for lab, (p, r) in precision_recall(gold, got).items():
        lines.append(f"{lab:12} {sum(g == lab for g in gold):4d} {p:9.2f} {r:7.2f}")
    if binary:
        g2 = ["supported" if g == "supported" else "unsupported" for g in gold]
        p2 = ["supported" if p == "supported" else "unsupported" for p in got]
        (sp, sr), (up, ur) = (precision_recall(g2, p2)[k] for k in ("supported", "unsupported"))
        lines.append(
            f"binary: supported P {sp:.2f} R {sr:.2f}; not-supported P {up:.2f} R {ur:.2f}"
        )
    lines.append(f"macro-F1 {macro_f1(gold, got):.2f}")
    return "\n".join(lines)


def main() -> None:
    """Score, (optionally) fit on tune, report on test."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", action="store_true", help="fit the thresholds on the tune half")
    args = ap.parse_args()
    from quarry_rerank import support

    pairs = load_pairs()
    feats = features_all(pairs)
    tune = [i for i, p in enumerate(pairs) if p.split == "tune"]
    test = [i for i, p in enumerate(pairs) if p.split == "test"]
    weights: tuple[float, ...] = support.WEIGHTS
    at = (support.SUPPORTED_AT, support.PARTLY_AT)
    if args.fit:
        weights = fit_weights([feats[i] for i in tune], [pairs[i].label for i in tune])
    scores = [support.blend(f, weights) for f in feats]
    if args.fit:
        at = fit([scores[i] for i in tune], [pairs[i].label for i in tune])
        print(f"fitted on tune ({len(tune)} pairs): WEIGHTS = {weights}")
        print(f"SUPPORTED_AT = {at[0]}, PARTLY_AT = {at[1]}")
    for name, idx in (("tune", tune), ("test", test)):
        gold = [pairs[i].label for i in idx]
        print(f"\n{name} half ({len(idx)} pairs), thresholds {at}:")
        print(report(gold, labels([scores[i] for i in idx], *at)))
    print("\nthe orchestrator's lexical marks (orchestrator/core/support.py), same pairs:")
    lexical = lexical_labels(pairs)
    for name, idx in (("tune", tune), ("test", test)):
        gold = [pairs[i].label for i in idx]
        print(f"\n{name} half ({len(idx)} pairs), lexical:")
        print(report(gold, [lexical[i] for i in idx]))
    print("\nwhat answers get (core/support.py with_model_marks, as core/ask/synthesise.py calls")
    print("it), same pairs:")
    wired = wired_labels(pairs, scores, support.label_for)
    for name, idx in (("tune", tune), ("test", test)):
        gold = [pairs[i].label for i in idx]
        print(f"\n{name} half ({len(idx)} pairs), wired:")
        print(report(gold, [wired[i] for i in idx]))
    sys.stdout.flush()


def wired_labels(
    pairs: Sequence[Pair], scores: Sequence[float], label_for: Callable[[float], str]
) -> list[str]:
    """What an answer shows for each pair: the lexical mark re-marked by the support model's
    score through orchestrator.core.support.with_model_marks, the function answers go through."""
    from orchestrator.core.support import mark_sentence, model_claims, with_model_marks

    out: list[str] = []
    for p, score in zip(pairs, scores, strict=True):
        marks = [mark_sentence(f"{p.sentence} [1]", {1: p.passage})]
        claims = model_claims(marks, {1: p.passage})
        marks = with_model_marks(marks, claims, [(score, label_for(score))] * len(claims))
        out.append(marks[0].support or "unsupported")
    return out


def lexical_labels(pairs: Sequence[Pair]) -> list[str]:
    """What orchestrator.core.support.mark_sentence says of each pair (the sentence citing its
    passage as source 1); a sentence with no claim to check counts as unsupported."""
    from orchestrator.core.support import mark_sentence

    marks = [mark_sentence(f"{p.sentence} [1]", {1: p.passage}) for p in pairs]
    return [m.support or "unsupported" for m in marks]


if __name__ == "__main__":
    main()
