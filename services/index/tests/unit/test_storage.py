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
from index.errors import CorpusStorageError, IndexOutdatedError
from index.passages import PassageParams
from quarry_text.analyzer import ANALYZER_VERSION, Analyzer, AnalyzerConfig
from quarry_text.chunking import CHUNKER_VERSION

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


def _manifest_path(data: Path) -> Path:
    (gen,) = list(data.glob("corpus/gen-*"))
    return gen / "manifest.json"


def _refusal(c: Corpus) -> str:
    with pytest.raises(IndexOutdatedError) as info:
        c.search("python")
    for call in (lambda: c.passages(["python"], PassageParams()), lambda: c.get(document(1).id)):
        with pytest.raises(IndexOutdatedError):
            call()
    assert c.documents() == []  # so an indexer re-adds every document
    return str(info.value)


def test_an_index_cut_to_another_passage_size_is_refused_until_rebuilt(tmp_path: Path) -> None:
    _committed(tmp_path, 10)
    c = Corpus(ANALYZER, tmp_path, chunk_words=200)
    c.load()
    message = _refusal(c)
    assert "120-word passages (now 200, INDEX_PASSAGE_WORDS)" in message
    assert "rebuild it with `quarry index`" in message
    # What `quarry index` does: list (nothing), re-add everything, commit.
    c.stage(c.prepare(corpus(10)), [])
    c.commit()
    assert c.search(marker(3))[0]
    again = Corpus(ANALYZER, tmp_path, chunk_words=200)
    again.load()
    assert again.stats().documents == 10


@pytest.mark.parametrize(
    ("other", "says"),
    [
        (AnalyzerConfig(stem=False), "stemmer english (now none, INDEX_STEM)"),
        (AnalyzerConfig(stopwords=False), "(now none, INDEX_STOPWORDS)"),
        (AnalyzerConfig(compounds=False), "compounds on (now off)"),
    ],
)
def test_an_index_built_by_another_analyser_is_refused_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, other: AnalyzerConfig, says: str
) -> None:
    # Stemming, stop-words and compound terms decide the stored postings: a query analysed
    # otherwise would silently miss them (issue 22 item 6).
    _committed(tmp_path, 10)
    with caplog.at_level(logging.WARNING):
        c = Corpus(Analyzer(other), tmp_path)
        c.load()
    message = _refusal(c)
    assert says in message
    assert "quarry index" in message
    assert any(getattr(r, "reason", "") == message for r in caplog.records)
    assert _reopen(tmp_path).stats().documents == 10  # refused, not destroyed


def test_a_refused_empty_corpus_is_rebuilt_by_an_empty_commit(tmp_path: Path) -> None:
    # A corpus folder emptied meanwhile: the refresh stages nothing, yet the commit writes
    # an index of today's settings, so searches stop failing.
    _committed(tmp_path, 5)
    c = Corpus(Analyzer(AnalyzerConfig(stem=False)), tmp_path)
    c.load()
    _refusal(c)
    assert c.commit().documents == 0
    assert c.search("python") == ([], 0)
    assert json.loads(_manifest_path(tmp_path).read_text())["text"]["analyser"]["stemmer"] == (
        "none"
    )


def test_a_manifest_of_the_analysis_string_era_is_read_as_its_settings(tmp_path: Path) -> None:
    # Written before the text library: the same settings as a string. Same string, same
    # terms: the index is used as it is; another string is refused like any other record.
    first = _committed(tmp_path, 10)
    path = _manifest_path(tmp_path)
    manifest = json.loads(path.read_text())
    del manifest["text"]
    settings = "stem=True stopwords=True compounds=True"
    legacy = f"v{ANALYZER_VERSION} {settings} chunker=v{CHUNKER_VERSION}"
    manifest["analysis"] = legacy
    path.write_text(json.dumps(manifest))
    assert _answers(_reopen(tmp_path)) == _answers(first)
    manifest["analysis"] = legacy.replace("stem=True", "stem=False")
    path.write_text(json.dumps(manifest))
    assert "stemmer none (now english, INDEX_STEM)" in _refusal(_reopen(tmp_path))


def test_an_index_from_before_the_manifest_recorded_its_analyser_is_refused(
    tmp_path: Path,
) -> None:
    # Neither record: analyser version 1 (no compound terms) wrote it.
    _committed(tmp_path, 10)
    path = _manifest_path(tmp_path)
    manifest = json.loads(path.read_text())
    del manifest["text"]
    path.write_text(json.dumps(manifest))
    message = _refusal(_reopen(tmp_path))
    assert f"analyser version 1 (now {ANALYZER_VERSION})" in message
    assert f"chunker version unrecorded (now {CHUNKER_VERSION})" in message
