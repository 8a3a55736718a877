"""The process-wide term dictionary."""

from __future__ import annotations

import threading

from ranker.analyzer import Analyzer
from ranker.vocabulary import STOP_ID, Vocabulary


def test_forms_of_one_stem_share_an_id_and_stopwords_map_to_stop() -> None:
    vocab = Analyzer().vocabulary
    snap, ids = vocab.lookup(["installing", "the", "installs", "python", "of"])
    installing, the, installs, python, of = ids.tolist()
    assert installing == installs != python
    assert the == of == STOP_ID
    assert snap.term_ids["instal"] == installing
    again, ids2 = vocab.lookup(["python"])
    assert again is snap
    assert ids2.tolist() == [python]


def test_starts_afresh_past_its_cap() -> None:
    analyzer = Analyzer()
    vocab = Vocabulary(analyzer.is_stopword, analyzer.stems, max_forms=3)
    first, _ = vocab.lookup(["alpha", "beta", "gamma", "delta"])
    second, ids = vocab.lookup(["epsilon"])
    assert second is not first
    assert set(second.form_ids) == {"epsilon"}
    assert ids.tolist() == [second.term_ids["epsilon"]]
    assert first.form_ids["alpha"] != STOP_ID  # an old snapshot stays usable


def test_concurrent_learning_agrees() -> None:
    analyzer = Analyzer()
    words = [f"word{i}" for i in range(2000)]
    results: list[list[int]] = []

    def learn() -> None:
        _, ids = analyzer.vocabulary.lookup(words)
        results.append(ids.tolist())

    threads = [threading.Thread(target=learn) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    assert all(r == results[0] for r in results)
    assert len(set(results[0])) == 2000
