"""A small-talk classifier: softmax regression over the local sentence embedder's vectors.

Trained in memory from ``smalltalk_examples`` when first needed (about 200 short messages: one
embedding batch and a few thousand numpy steps, no download, nothing written). A message is small
talk only when the classes other than ``question`` together reach ``THRESHOLD``; everything
else is searched, so a doubt always costs a search, never an answer without sources.

Why a regression on embeddings and not the nearest labelled examples: on the same training and
evaluation sets, nearest neighbours (mean cosine of the 3 closest small-talk examples minus that
of the 3 closest questions) recognised 60 of 74 small-talk messages, the regression 63, both
losing no question (bench/smalltalk/bench_smalltalk.py prints both beside the patterns).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from orchestrator.core.ask import smalltalk_examples as examples
from orchestrator.core.ask.smalltalk_rules import Kind

Matrix = npt.NDArray[np.float64]
Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

#: Class 0 is "search it"; the others are the kinds of small talk.
LABELS: tuple[str, ...] = ("question", "greeting", "thanks", "goodbye", "conversation")
#: The share the small-talk classes must reach together, chosen by 5-fold cross-validation on
#: the training examples only: at 0.7 the held-out folds kept 96 of 114 small-talk messages and
#: took 6 of 123 questions for small talk, at 0.8 91 and 2, at 0.9 78 and 1. The questions
#: lost are the one-of-a-kind follow-ups and bare words ("go on", "new"), all of which are in
#: the final training set. A doubt costs a search; a wrong "small talk" costs the answer.
THRESHOLD = 0.8
#: Longer messages are questions whatever they open with (no embedding is computed): small talk
#: is short, and a long message that starts with thanks goes on to ask something.
MAX_WORDS = 24
# A token with a digit, "_", "/" or a leading "-" (a number, version, code, path, option):
# small talk has none, and on such fragments ("q", "pt_BR", "7") the regression extrapolates.
_CODE = re.compile(r"(?:^|\s)(?:-|\S*[\d_/])")
# A word of two letters or more: a message without one ("q", "?!") is not small talk.
_WORD = re.compile(r"[^\W\d_]{2,}")
# Training: L2 penalty, full-batch gradient steps and step size. Weak regularisation and enough
# steps separate titles such as "hello kitty history" from greetings (cross-validated as above).
L2 = 1e-4
STEPS = 2000
RATE = 2.0


def training_set() -> dict[str, tuple[str, ...]]:
    """The labelled training messages by class (``smalltalk_examples``)."""
    return {
        "question": examples.QUESTION,
        "greeting": examples.GREETING,
        "thanks": examples.THANKS,
        "goodbye": examples.GOODBYE,
        "conversation": examples.CONVERSATION,
    }


def normalise(message: str) -> str:
    """One line, single spaces (the embedder's tokenizer lower-cases by itself)."""
    return " ".join(message.split())


def _softmax(z: Matrix) -> Matrix:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return cast(Matrix, e / e.sum(axis=1, keepdims=True))


def fit(x: Matrix, y: npt.NDArray[np.int64], classes: int) -> tuple[Matrix, Matrix]:
    """Weights and bias of an L2-penalised softmax regression, classes weighted equally.

    Deterministic (zero start, full batch): the same examples give the same model.
    """
    n, dim = x.shape
    counts = np.bincount(y, minlength=classes).astype(np.float64)
    sample_weight = (n / (classes * np.maximum(counts, 1)))[y][:, None]
    target = np.eye(classes)[y]
    weights = np.zeros((dim, classes))
    bias = np.zeros((1, classes))
    for _ in range(STEPS):
        grad = (_softmax(x @ weights + bias) - target) * sample_weight / n
        weights -= RATE * (x.T @ grad + L2 * weights)
        bias -= RATE * grad.sum(axis=0, keepdims=True)
    return weights, bias


@dataclass(frozen=True)
class Classifier:
    """A trained model: ``classify`` embeds one message (a few ms) and applies the weights."""

    embed: Embed
    weights: Matrix
    bias: Matrix

    @classmethod
    def train(cls, embed: Embed, labelled: Mapping[str, Sequence[str]] | None = None) -> Classifier:
        """Fit on ``labelled`` (class name → messages; default ``training_set()``).

        Raises:
            ValueError: a class name is not one of ``LABELS``.
        """
        labelled = labelled if labelled is not None else training_set()
        unknown = set(labelled) - set(LABELS)
        if unknown:
            raise ValueError(f"unknown small-talk classes: {sorted(unknown)}")
        texts = [normalise(m) for name in LABELS for m in labelled.get(name, ())]
        y = np.array(
            [i for i, name in enumerate(LABELS) for _ in labelled.get(name, ())], dtype=np.int64
        )
        x = embed(texts).astype(np.float64)
        weights, bias = fit(x, y, len(LABELS))
        return cls(embed, weights, bias)

    def probabilities(self, messages: Sequence[str]) -> Matrix:
        """Class probabilities, one row per message, columns in ``LABELS`` order."""
        x = self.embed([normalise(m) for m in messages]).astype(np.float64)
        return _softmax(x @ self.weights + self.bias)

    def classify(self, message: str) -> Kind | None:
        """The kind of small talk ``message`` is, or None when it should be searched."""
        text = normalise(message)
        if len(text.split()) > MAX_WORDS or not _WORD.search(text) or _CODE.search(text):
            return None
        (row,) = self.probabilities([text])
        if 1.0 - row[0] < THRESHOLD:
            return None
        return cast(Kind, LABELS[1 + int(np.argmax(row[1:]))])
