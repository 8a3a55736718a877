"""Small talk on the labelled evaluation set (bench/smalltalk/messages.yaml, never trained on):
no real question may be taken for small talk, and recall may only go up.

The table with today's patterns beside the classifier: bench/smalltalk/bench_smalltalk.py.
"""

from __future__ import annotations

from orchestrator.core.ask import smalltalk, smalltalk_rules
from orchestrator.core.ask.smalltalk_model import normalise, training_set

from bench.smalltalk.smalltalk_eval import load, score

# Measured 63 of 74 (85 %) on the 2-core box, rounded down to 80 %: one recognised message
# sits within 0.01 of the threshold and may flip with another CPU's float rounding. The closest
# question scored 0.61 against the 0.8 threshold.
RECALL_FLOOR = 0.80


def test_the_labelled_set_is_big_enough_and_apart_from_the_training_set() -> None:
    messages = load()
    assert len(messages) >= 100
    trained = {normalise(m).lower() for texts in training_set().values() for m in texts}
    assert not [m.text for m in messages if normalise(m.text).lower() in trained]
    labels = {m.label for m in messages}
    assert labels == {"greeting", "thanks", "goodbye", "conversation", "question"}


def test_the_classifier_loses_no_question_and_keeps_its_recall() -> None:
    messages = load()
    assert smalltalk._load() is not None, "the embedder did not load: see the log"
    result = score("classifier", smalltalk.classify_sync, messages)
    assert result.lost == []
    assert result.recall >= RECALL_FLOOR, result.missed


def test_the_fallback_patterns_lose_no_question_either() -> None:
    result = score("patterns", smalltalk_rules.classify, load())
    assert result.lost == []
