"""The corpus domain in memory: staging, commits, incremental changes, search, scores."""

from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from index.corpus import Corpus
from index.errors import NotFoundError, StagingFullError
from index.types import Document
from quarry_text.analyzer import Analyzer
from quarry_text.bm25 import BM25_B, BM25_K1, bm25_scores
from rank_bm25 import BM25Okapi

from services.index.tests.generated import corpus, document, marker

ANALYZER = Analyzer()


class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]  # rank_bm25 is untyped
    """rank_bm25's Okapi BM25 with Lucene's idf, which bm25s uses; tf part times (k1 + 1)."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, df in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5))


def _corpus(docs: list[Document], **kwargs: object) -> Corpus:
    c = Corpus(ANALYZER, **kwargs)  # type: ignore[arg-type]
    c.stage(c.prepare(docs), [])
    c.commit()
    return c


def _ids(c: Corpus, query: str, top_k: int = 100) -> list[str]:
    return [h.id for h in c.search(query, top_k)[0]]


def test_staged_changes_are_listed_but_not_searchable_until_commit() -> None:
    docs = corpus(40)
    c = Corpus(ANALYZER)
    assert c.stage(c.prepare(docs), []) == (40, 0, 40)
    assert [i.id for i in c.documents()] == sorted(d.id for d in docs)
    assert c.search(marker(3)) == ([], 0)
    with pytest.raises(NotFoundError):
        c.get(docs[3].id)
    stats = c.commit()
    assert (stats.documents, stats.pending) == (40, 0)
    assert stats.committed_at.endswith("Z")
    assert _ids(c, marker(3)) == [docs[3].id]
    assert c.get(docs[3].id) == docs[3]


def test_incremental_refresh_changes_exactly_what_changed() -> None:
    docs = corpus(300)
    c = _corpus(docs)
    before = {i.id: i for i in c.documents()}
    assert c.stats().chunks == sum(i.chunks for i in before.values())
    updated = [document(i, version=1) for i in (10, 11, 12)]
    added = [document(i) for i in (300, 301)]
    removed = [docs[20].id, docs[21].id, "local:/not/indexed"]
    upserted, n_removed, pending = c.stage(c.prepare(updated + added), removed)
    assert (upserted, n_removed, pending) == (5, 2, 7)
    staged = {i.id: i for i in c.documents()}
    assert set(staged) == set(before) - set(removed) | {d.id for d in added}
    assert staged[updated[0].id].content_hash == updated[0].content_hash
    assert _ids(c, marker(20)) == [docs[20].id]  # still the committed view
    stats = c.commit()
    assert (stats.documents, stats.pending) == (300, 0)
    after = {i.id: i for i in c.documents()}
    changed = {d.id for d in updated + added} | set(removed)
    assert {k: v for k, v in after.items() if k not in changed} == {
        k: v for k, v in before.items() if k not in changed
    }
    assert _ids(c, marker(20)) == []
    assert _ids(c, marker(300)) == [added[0].id]
    assert c.get(updated[0].id).markdown == updated[0].markdown
    assert _ids(c, f"{marker(10)} v1")[0] == updated[0].id
    assert stats.chunks == sum(i.chunks for i in after.values())


def test_scores_after_changes_equal_a_fresh_build() -> None:
    docs = corpus(120)
    c = _corpus(docs)
    c.stage(c.prepare([document(i, version=2) for i in range(0, 120, 3)]), [docs[1].id])
    c.commit()
    fresh = _corpus([c.get(i.id) for i in c.documents()])
    for query in ("python install package", "garden soil compost", "tide anchor"):
        a, b = c.search(query, 50)[0], fresh.search(query, 50)[0]
        assert [h.id for h in a] == [h.id for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b])


def test_chunk_scores_agree_with_bm25s_and_rank_bm25() -> None:
    c = _corpus(corpus(60))
    snap = c._snapshot
    texts = [snap.chunk_text.get(i) for i in range(snap.n_chunks)]
    for query in ("python install package", "borrow checker lifetime", "bread oven"):
        terms = ANALYZER.query_terms(query)
        mine = snap.scores([snap.term_ids[t] for t in terms])
        # RankChunks's scoring: bm25s over the same term counts (no near-duplicate removal).
        assert mine == pytest.approx(bm25_scores(ANALYZER, terms, texts), rel=1e-5)
    # rank_bm25 with Lucene's idf on a small sample; its tf part is times (k1 + 1).
    sample = texts[:25]
    analysed = [ANALYZER.terms(t) for t in sample]
    lengths = [len(ANALYZER.surface_tokens(t)) for t in sample]
    small = _corpus([Document(f"local:/s/{i:02d}", "", t, "ab") for i, t in enumerate(sample)])
    terms = ANALYZER.query_terms("python garden wind")
    ids = [small._snapshot.term_ids[t] for t in terms if t in small._snapshot.term_ids]
    mine = small._snapshot.scores(ids)
    # Stop-words count towards a chunk's length but are no terms: pad with a non-term.
    padded = [d + ["\x00"] * (n - len(d)) for d, n in zip(analysed, lengths, strict=True)]
    oracle = LuceneIdfOkapi(padded, k1=BM25_K1, b=BM25_B).get_scores(terms)
    assert list(mine * (BM25_K1 + 1)) == pytest.approx(list(oracle), rel=1e-9)
    n, avg = len(sample), sum(lengths) / len(sample)
    direct = []
    for doc, length in zip(analysed, lengths, strict=True):
        tf = Counter(doc)
        score = 0.0
        for t in terms:
            df = sum(t in d for d in analysed)
            if tf[t]:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf[t] / (tf[t] + BM25_K1 * (1 - BM25_B + BM25_B * length / avg))
        direct.append(score)
    assert list(mine) == pytest.approx(direct, rel=1e-9)


def test_search_ranks_documents_by_their_best_chunk_with_a_snippet() -> None:
    docs = corpus(200)
    c = _corpus(docs)
    hits, total = c.search("compost soil harvest", 10)
    assert total == 200
    assert len(hits) == 10
    assert [h.rank for h in hits] == list(range(1, 11))
    assert all("/garden/" in h.id for h in hits)
    assert len({h.id for h in hits}) == 10
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for h in hits:
        assert len(h.snippet) <= 302
        words = set(ANALYZER.terms(h.snippet))
        assert words & {"compost", "soil", "harvest"}
    assert c.search("compost soil harvest", 3)[0] == hits[:3]


def test_ties_are_broken_by_id_and_top_k_respected() -> None:
    docs = [Document(f"local:/t/{name}", name, "same words here", "0f") for name in "dcbae"]
    c = _corpus(docs)
    assert _ids(c, "words") == [f"local:/t/{n}" for n in "abcde"]
    assert _ids(c, "words", 2) == ["local:/t/a", "local:/t/b"]


def test_empty_corpus_stop_words_and_unknown_terms_give_no_results() -> None:
    assert Corpus(ANALYZER).search("anything") == ([], 0)
    c = _corpus(corpus(30))
    assert c.search("the and of") == ([], 30)
    assert c.search("qqqnothing") == ([], 30)
    assert c.search("") == ([], 30)
    assert c.commit().pending == 0  # nothing staged: nothing to do


def test_odd_documents_are_indexed_without_harm() -> None:
    docs = corpus(100)
    c = _corpus(docs)
    listed = {i.id: i for i in c.documents()}
    assert listed[docs[5].id].chunks == 1  # no text: its title only
    assert c.get(docs[5].id).markdown == ""
    assert docs[5].id in _ids(c, docs[5].title)
    assert _ids(c, marker(7)) == [docs[7].id]  # next to a 20,000-character token
    assert _ids(c, "東京") == [docs[8].id]
    assert _ids(c, "straße") == [docs[8].id]
    assert "\x00" in c.get(docs[8].id).markdown


def test_unicode_documents_and_queries() -> None:
    ja = "# 日本庭園\n\n東京の日本庭園は美しい。"
    docs = [
        Document("local:/u/ja.md", "庭", ja, "aa", kind="markdown"),
        Document("local:/u/de.txt", "Straße", "Die Straße führt über die Brücke.", "bb"),
        Document("local:/u/ru.html", "Лес", "Летний лес и озеро.", "cc", kind="html"),
    ]
    c = _corpus(docs)
    assert _ids(c, "庭園") == ["local:/u/ja.md"]
    assert _ids(c, "brücke") == ["local:/u/de.txt"]
    assert _ids(c, "ЛЕС") == ["local:/u/ru.html"]
    assert c.search("庭園")[0][0].snippet == "日本庭園 東京の日本庭園は美しい。"


def test_removing_a_staged_only_document_forgets_it() -> None:
    c = _corpus(corpus(10))
    new = document(50)
    c.stage(c.prepare([new]), [])
    assert c.stage([], [new.id, new.id]) == (0, 1, 0)
    assert new.id not in {i.id for i in c.documents()}
    assert c.commit().documents == 10


def test_a_change_staged_during_a_commit_stays_pending() -> None:
    docs = corpus(50)
    entered, release = threading.Event(), threading.Event()

    def pause() -> None:
        entered.set()
        assert release.wait(10)

    c = Corpus(ANALYZER, before_swap=pause)
    c.stage(c.prepare(docs), [])
    worker = threading.Thread(target=c.commit)
    worker.start()
    assert entered.wait(10)
    # The build is done but not swapped in: queries see the previous (empty) index.
    assert c.search(marker(1)) == ([], 0)
    newer = document(1, version=3)
    c.stage(c.prepare([newer]), [])
    release.set()
    worker.join(10)
    assert c.stats().pending == 1
    assert _ids(c, marker(1)) == [docs[1].id]
    assert c.get(docs[1].id).content_hash == docs[1].content_hash
    c.commit()  # release is still set: no pause
    assert c.get(docs[1].id).content_hash == newer.content_hash


def test_vocabulary_is_compacted_when_most_terms_are_gone() -> None:
    docs = [Document(f"local:/v/{i}", "", f"common word{i} other{i}", "ab") for i in range(400)]
    c = _corpus(docs)
    big = len(c._snapshot.vocab)
    c.stage([], [d.id for d in docs[:350]])
    c.commit()
    snap = c._snapshot
    assert len(snap.vocab) < big / 2
    assert _ids(c, "word399 common", 100)[0] == "local:/v/399"
    assert len(_ids(c, "common")) == 50
    assert np.diff(snap.term_ptr).min() > 0


def test_document_metadata_round_trips() -> None:
    d = replace(document(3), size=123, mtime_ns=-5, kind="pdf", title="T")
    c = _corpus([d])
    assert c.get(d.id) == d
    info = c.documents()[0]
    assert (info.size, info.mtime_ns, info.kind, info.title) == (123, -5, "pdf", "T")


def test_staged_text_is_bounded_until_a_commit() -> None:
    docs = [Document(f"local:/b/{i}", "", "word " * 200, "ab") for i in range(6)]  # 1000 B
    c = Corpus(ANALYZER, max_staged_bytes=2500)
    c.stage(c.prepare(docs[:2]), [])
    with pytest.raises(StagingFullError, match="CommitCorpus"):
        c.stage(c.prepare(docs[2:4]), [docs[0].id])
    assert [i.id for i in c.documents()] == [docs[0].id, docs[1].id]  # nothing staged
    c.commit()
    c.stage(c.prepare(docs[2:4]), [docs[0].id])  # a commit makes room
    assert c.stage([], [docs[1].id]) == (0, 1, 4)  # removals need no room


def test_removing_a_document_that_the_running_commit_adds_removes_it_next() -> None:
    entered, release = threading.Event(), threading.Event()

    def pause() -> None:
        entered.set()
        assert release.wait(10)

    c = Corpus(ANALYZER, before_swap=pause)
    new = document(30)
    c.stage(c.prepare([new, document(31)]), [])
    worker = threading.Thread(target=c.commit)
    worker.start()
    assert entered.wait(10)
    assert c.stage([], [new.id]) == (0, 1, 2)
    assert new.id not in {i.id for i in c.documents()}
    release.set()
    worker.join(10)
    assert c.stats().pending == 1  # the removal waits for the next commit
    assert new.id not in {i.id for i in c.documents()}
    assert c.commit().documents == 1
    assert _ids(c, marker(30)) == []


def test_titles_are_searchable_once() -> None:
    docs = [
        Document("local:/t/q3-budget.pdf", "Q3 budget plan", "Numbers for the quarter.", "aa"),
        Document("local:/t/notes.md", "Garden notes", "# Garden notes\n\nTomatoes.", "bb"),
    ]
    c = _corpus(docs)
    hits = c.search("budget plan")[0]
    assert [h.id for h in hits] == ["local:/t/q3-budget.pdf"]
    assert hits[0].snippet == "Q3 budget plan Numbers for the quarter."
    assert c.get("local:/t/q3-budget.pdf").markdown == "Numbers for the quarter."  # as sent
    assert c.search("garden")[0][0].snippet == "Garden notes Tomatoes."  # not doubled


def test_documents_without_any_text_sit_between_others_harmlessly() -> None:
    docs = [
        Document(f"local:/e/{i}", "", "" if i % 2 else f"text {marker(i)}", "ab") for i in range(6)
    ]
    c = _corpus(docs)
    assert [i.chunks for i in c.documents()] == [1, 0, 1, 0, 1, 0]
    for i in (0, 2, 4):
        assert _ids(c, marker(i)) == [f"local:/e/{i}"]
    assert len(_ids(c, "text")) == 3
