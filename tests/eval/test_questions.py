"""The eval question sets hold: at least 80 tuning questions of every kind, at least 30 per
held-out set with deep questions the largest kind, at least 20 unanswerable and 20 off-topic
ones; each pattern proven against the reader's own extraction of its gold pages, kinds true to
the engine's snippets, no single page answering a two-page question, and every no-answer
pattern absent from its corpus (bench/eval/check.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.eval import docweb
from bench.eval.check import check_all
from bench.eval.questions import KINDS, LOCAL_SET, load

pytestmark = pytest.mark.usefixtures("doc_sets")


def test_the_sets_are_large_enough_and_deep_questions_lead_on_held_out_sets() -> None:
    questions = load()
    tuning = [q for q in questions if q.answerable and docweb.role_of(q.set) == "tuning"]
    assert len(tuning) >= 80
    for kind in KINDS:
        assert sum(q.kind == kind for q in tuning) >= 20, kind
    held_out = [s.name for s in docweb.SETS if s.role == "held-out"]
    assert len(held_out) >= 2
    for name in held_out:
        kinds = Counter(q.kind for q in questions if q.answerable and q.set == name)
        assert sum(kinds.values()) >= 30, name
        assert kinds["deep"] > kinds["snippet"], name
        assert kinds["deep"] > kinds["two_page"], name
    assert sum(q.kind == "unanswerable" for q in questions) >= 20
    assert sum(q.kind == "offtopic" and q.set == LOCAL_SET for q in questions) >= 20


@pytest.mark.timeout(300)
def test_every_question_is_proven_against_its_corpus() -> None:
    assert check_all(load()) == []
