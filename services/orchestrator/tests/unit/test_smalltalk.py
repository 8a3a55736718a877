"""Small talk: the embedding classifier (real model, trained in memory) and its fallback, the
whole-message patterns. The labelled evaluation set's floors are in tests/eval."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pytest
import quarry_embed
from orchestrator.core.ask import smalltalk, smalltalk_rules
from orchestrator.core.ask.smalltalk_model import LABELS, MAX_WORDS, Classifier


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        # The issue's own examples: unlisted phrasings of small talk ...
        ("Hello there, thanks for the help!", "thanks"),
        ("what did you just say?", "conversation"),
        ("can you say that shorter", "conversation"),
        # ... and questions that open with small talk, which must still be searched.
        ("hi, how do I configure nginx as a reverse proxy?", None),
        ("thanks! and how does TLS work?", None),
        ("Hi!", "greeting"),
        ("good morning", "greeting"),
        ("Thanks a lot!", "thanks"),
        ("ok, thank you", "thanks"),
        ("bye for now", "goodbye"),
        ("What did I ask?", "conversation"),
        ("summarize our conversation please", "conversation"),
        ("hi, what causes tides on the coast of Brittany in winter?", None),
        ("thanksgiving date 2026", None),
        ("what causes tides", None),
        ("", None),
    ],
)
async def test_small_talk_is_recognised_and_questions_are_not(
    message: str, kind: str | None
) -> None:
    assert await smalltalk.classify(message) == kind


def _refusing_embed(texts: Sequence[str]) -> np.ndarray:
    raise AssertionError(f"embedded {texts!r}")


def test_a_long_message_is_a_question_without_an_embedding() -> None:
    model = Classifier(_refusing_embed, np.zeros((384, len(LABELS))), np.zeros((1, len(LABELS))))
    assert model.classify("thanks " + "really " * MAX_WORDS) is None


def test_training_refuses_an_unknown_class() -> None:
    with pytest.raises(ValueError, match="unknown small-talk classes"):
        Classifier.train(_refusing_embed, {"chitchat": ["hi"]})


def test_without_the_embedder_the_patterns_decide_and_the_log_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def unavailable(**_: object) -> quarry_embed.Embedder:
        raise quarry_embed.EmbedderUnavailable("the model package is not installed")

    monkeypatch.setattr(quarry_embed.Embedder, "load", unavailable)
    monkeypatch.setattr(smalltalk, "_loaded", False)
    monkeypatch.setattr(smalltalk, "_model", None)
    with caplog.at_level(logging.WARNING, logger="orchestrator.core.ask.smalltalk"):
        assert smalltalk.classify_sync("thanks a lot") == "thanks"
        # an unlisted phrasing: only the classifier knows it
        assert smalltalk.classify_sync("Hello there, thanks for the help!") is None
    assert "using patterns" in caplog.text


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Hi!", "greeting"),
        ("good morning", "greeting"),
        ("Thanks a lot!", "thanks"),
        ("ok, thank you", "thanks"),
        ("What did I ask?", "conversation"),
        ("summarize our conversation please", "conversation"),
        ("hi, what causes tides on the coast of Brittany in winter?", None),
        ("thanksgiving date 2026", None),
        ("what causes tides", None),
    ],
)
def test_the_fallback_patterns_match_their_lists(message: str, kind: str | None) -> None:
    assert smalltalk_rules.classify(message) == kind
