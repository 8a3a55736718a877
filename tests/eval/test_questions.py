"""The eval question set holds: at least 80 questions of every kind, each pattern proven against
the reader's own extraction of its gold pages, kinds true to the engine's snippets, and no
single page answering a two-page question (bench/eval/check.py)."""

from __future__ import annotations

import pytest

from bench.eval.check import check_all
from bench.eval.questions import KINDS, load

pytestmark = pytest.mark.usefixtures("doc_sets")


@pytest.mark.timeout(300)
def test_every_question_is_proven_against_the_doc_web() -> None:
    questions = load()
    assert len(questions) >= 80
    for kind in KINDS:
        assert sum(q.kind == kind for q in questions) >= 20, kind
    assert check_all(questions) == []
