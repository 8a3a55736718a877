"""The corpus on disk: restart reuses the index; crashes and damage never lose the last
good commit or stop the service."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from index import corpus as corpus_module
from index import storage
from index.corpus import Corpus
from index.errors import CorpusStorageError
from ranker.analyzer import Analyzer, AnalyzerConfig

from services.index.tests.generated import corpus, document, marker

ANALYZER = Analyzer()
QUERIES = ("python install package", "garden soil", marker(17), "東京", "tide anchor wind")


def _committed(data: Path, n: int = 150) -> Corpus:
    c = Corpus(ANALYZER, data)
    c.load()
    c.stage(c.prepare(corpus(n)), [])
    c.commit()
    return c


def _reopen(data: Path) -> Corpus:
    c = Corpus(ANALYZER, data)
    c.load()
    return c


def _answers(c: Corpus) -> list[object]:
    return [c.search(q, 20) for q in QUERIES]


def test_a_restart_reuses_the_committed_index_without_reindexing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _committed(tmp_path)
    monkeypatch.setattr(corpus_module, "prepare", lambda *a: pytest.fail("re-indexed"))
    second = _reopen(tmp_path)
    assert second.stats() == first.stats()
    assert second.documents() == first.documents()
    assert _answers(second) == _answers(first)
    doc = document(17)
    assert second.get(doc.id) == doc


def test_changes_after_a_restart_persist_too(tmp_path: Path) -> None:
    c = _committed(tmp_path, 60)
    again = _reopen(tmp_path)
    again.stage(again.prepare([document(7, version=1), document(60)]), [document(3).id])
    again.commit()
    third = _reopen(tmp_path)
    assert third.documents() == again.documents()
    assert len(third.documents()) == len(c.documents())
    assert third.get(document(7).id).markdown == document(7, version=1).markdown
    assert [p.name for p in sorted((tmp_path / "corpus").iterdir())] == ["CURRENT", "gen-00000002"]


def test_a_crash_before_the_pointer_swap_keeps_the_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = _committed(tmp_path, 80)
    before = _answers(c)

    def crash(root: Path, name: str) -> None:
        raise OSError("killed")

    monkeypatch.setattr(storage, "point_current", crash)
    c.stage(c.prepare([document(i, version=1) for i in range(40)]), [document(50).id])
    with pytest.raises(CorpusStorageError):
        c.commit()
    assert (tmp_path / "corpus" / "gen-00000002").is_dir()  # written, never pointed at
    assert _answers(c) == before
    assert c.stats().pending == 41
    assert _answers(_reopen(tmp_path)) == before
    monkeypatch.undo()
    c.commit()  # the staged changes were kept: a retry applies them
    assert c.stats().pending == 0
    names = sorted(p.name for p in (tmp_path / "corpus").iterdir())
    assert names == ["CURRENT", "gen-00000003"]
    assert _reopen(tmp_path).get(document(0).id).markdown == document(0, version=1).markdown


def test_a_half_written_generation_is_ignored(tmp_path: Path) -> None:
    c = _committed(tmp_path, 30)
    tmp = tmp_path / "corpus" / "gen-00000002.tmp"
    tmp.mkdir()
    (tmp / "markdown.bin").write_bytes(b"partial")
    assert _answers(_reopen(tmp_path)) == _answers(c)
    again = _reopen(tmp_path)
    again.stage(again.prepare([document(99)]), [])
    again.commit()
    assert not tmp.exists()


@pytest.mark.parametrize(
    ("file", "damage"),
    [
        ("markdown.bin", lambda b: b[:-1] + bytes([b[-1] ^ 1])),
        ("chunks.bin", lambda b: b[: len(b) // 2]),
        ("arrays.npz", lambda b: b[:100]),
        ("manifest.json", lambda b: b"{not json"),
        ("vocab.txt", lambda b: b"x" + b),
    ],
)
# (vectors.npy is checksummed like the others: tests/unit/test_dense.py writes it.)
def test_a_damaged_index_is_logged_and_left_unused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, file: str, damage: object
) -> None:
    _committed(tmp_path, 40)
    path = tmp_path / "corpus" / "gen-00000001" / file
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    with caplog.at_level(logging.WARNING):
        c = _reopen(tmp_path)
    assert "corpus index unusable" in caplog.text
    assert c.stats().documents == 0
    assert c.search("python") == ([], 0)
    c.stage(c.prepare(corpus(5)), [])
    assert c.commit().documents == 5  # and the next commit starts over cleanly
    assert _reopen(tmp_path).stats().documents == 5


@pytest.mark.parametrize("pointer", ["gen-00000009\n", "../../etc\n", ""])
def test_a_bad_pointer_is_logged_and_left_unused(tmp_path: Path, pointer: str) -> None:
    _committed(tmp_path, 10)
    (tmp_path / "corpus" / "CURRENT").write_text(pointer)
    assert _reopen(tmp_path).stats().documents == 0


def test_an_unwritable_data_dir_fails_the_commit_not_the_service(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    c = Corpus(ANALYZER, blocker)
    c.load()  # logged, not raised
    c.stage(c.prepare(corpus(3)), [])
    with pytest.raises(CorpusStorageError):
        c.commit()
    assert c.stats().pending == 3


def test_an_empty_corpus_round_trips(tmp_path: Path) -> None:
    c = _committed(tmp_path, 4)
    c.stage([], [d.id for d in corpus(4)])
    assert c.commit().documents == 0
    again = _reopen(tmp_path)
    assert again.stats().documents == 0
    assert again.stats().committed_at == c.stats().committed_at
    assert again.search("python") == ([], 0)


def test_an_index_cut_to_another_passage_size_is_left_unused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _committed(tmp_path, 10)
    with caplog.at_level(logging.WARNING):
        c = Corpus(ANALYZER, tmp_path, chunk_words=200)
        c.load()
    reasons = [getattr(r, "reason", "") for r in caplog.records]
    assert any("built with 120-word passages, not 200" in r for r in reasons), reasons
    assert c.stats().documents == 0  # the indexer re-adds every document


@pytest.mark.parametrize(
    "other",
    [AnalyzerConfig(stem=False), AnalyzerConfig(stopwords=False), AnalyzerConfig(compounds=False)],
)
def test_an_index_built_by_another_analyser_is_left_unused_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, other: AnalyzerConfig
) -> None:
    # Stemming, stop-words and compound terms decide the stored postings: a query analysed
    # otherwise would silently miss them (issue 22 item 6).
    _committed(tmp_path, 10)
    with caplog.at_level(logging.WARNING):
        c = Corpus(Analyzer(other), tmp_path)
        c.load()
    reasons = [str(getattr(r, "reason", "")) for r in caplog.records]
    assert any(
        ANALYZER.config.signature() in r and other.signature() in r and "rebuilt" in r
        for r in reasons
    ), reasons
    assert c.stats().documents == 0  # the indexer re-adds every document
    assert _reopen(tmp_path).stats().documents == 10  # the default analyser still reads it


def test_an_index_from_before_the_manifest_recorded_its_analyser_is_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _committed(tmp_path, 10)
    (gen,) = list(tmp_path.glob("corpus/gen-*"))
    manifest = json.loads((gen / "manifest.json").read_text())
    del manifest["analysis"]
    (gen / "manifest.json").write_text(json.dumps(manifest))
    with caplog.at_level(logging.WARNING):
        c = _reopen(tmp_path)
    reasons = [str(getattr(r, "reason", "")) for r in caplog.records]
    assert any("an analyser older than the recorded ones" in r for r in reasons), reasons
    assert c.stats().documents == 0
