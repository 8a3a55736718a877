"""Small talk: the embedding classifier beside today's whole-message patterns, same run.

Every message of bench/smalltalk/messages.yaml (never trained on) goes through:

- patterns: ``orchestrator.core.ask.smalltalk_rules`` (the regex lists; the fallback);
- nearest examples: the mean cosine of the 3 closest small-talk training examples minus that
  of the 3 closest questions, small talk above ``KNN_MARGIN`` (the alternative considered);
- classifier: ``orchestrator.core.ask.smalltalk_model`` (what the agent uses).

Prints the table (small talk handled as small talk, real questions lost), the messages each
got wrong, the time to load and train, and the time per message (p50 / p95).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `bench.*` importable
    sys.path.insert(0, str(ROOT))

from orchestrator.core.ask import smalltalk_rules  # noqa: E402 -- after sys.path
from orchestrator.core.ask.smalltalk_model import (  # noqa: E402
    LABELS,
    Classifier,
    normalise,
    training_set,
)
from quarry_embed import Embedder  # noqa: E402

from bench.smalltalk.smalltalk_eval import Detector, Score, load, score, table  # noqa: E402

# The nearest-examples margin at which 5-fold cross-validation on the training set lost the
# fewest questions while still recognising most small talk (0.15: 4 of 102 lost).
KNN_MARGIN = 0.15
KNN_K = 3


def nearest_examples(embedder: Embedder) -> Detector:
    """The k-nearest-examples detector over the same training set."""
    train = training_set()
    texts = [normalise(m) for name in LABELS for m in train[name]]
    is_talk = np.array([name != "question" for name in LABELS for _ in train[name]])
    vectors = embedder.embed(texts)

    def detect(message: str) -> str | None:
        sims = vectors @ embedder.embed([normalise(message)])[0]
        talk = np.sort(sims[is_talk])[-KNN_K:].mean()
        question = np.sort(sims[~is_talk])[-KNN_K:].mean()
        return "small talk" if talk - question >= KNN_MARGIN else None

    return detect


def _timed(model: Classifier, texts: list[str]) -> tuple[float, float]:
    times = []
    for t in texts:
        start = time.perf_counter()
        model.classify(t)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> int:
    messages = load()
    start = time.perf_counter()
    embedder = Embedder.load(threads=1)
    loaded = time.perf_counter() - start
    model = Classifier.train(embedder.embed)
    trained = time.perf_counter() - start - loaded
    scores: list[Score] = [
        score("patterns (today's regex lists)", smalltalk_rules.classify, messages),
        score(f"nearest examples (k={KNN_K})", nearest_examples(embedder), messages),
        score("classifier on embeddings", model.classify, messages),
    ]
    print(f"{len(messages)} labelled messages (bench/smalltalk/messages.yaml)\n")
    print(table(scores))
    for s in scores:
        print(f"\n{s.name}: lost {s.lost or 'none'}; missed {len(s.missed)}: {s.missed}")
    p50, p95 = _timed(model, [m.text for m in messages])
    print(f"\nmodel load {loaded:.2f} s, training {trained:.2f} s; per message p50 {p50:.1f} ms")
    print(f"p95 {p95:.1f} ms (one embedding, 1 thread)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
