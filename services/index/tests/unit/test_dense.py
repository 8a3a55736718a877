"""Embeddings stored with the index and hybrid SearchPassages, with a deterministic fake
embedder (the real model is tested in tests/integration/test_real_embedder.py)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from index.corpus import Corpus
from index.dense import Vectors, load_embedder
from index.passages import PassageParams
from index.types import Document
from quarry_text.analyzer import Analyzer

ANALYZER = Analyzer()
# Words that mean the same thing share one dimension, as a real embedding model would put
# them close: "automobile" finds "car" although BM25 sees no shared term.
CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "boat": 1, "vessel": 1, "ship": 1}
DIM = 64


class FakeEmbedder:
    """Hashed bag of concepts, L2-normalised; records every text it embeds."""

    def __init__(self, name: str = "fake-v1") -> None:
        self._name = name
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        out = np.zeros((len(texts), DIM), np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                dim = CONCEPTS.get(word, 2 + sum(map(ord, word)) % (DIM - 2))
                out[i, dim] += 1.0
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-9)
        return out


def _doc(name: str, text: str) -> Document:
    return Document(
        f"local:/notes/{name}.md", name.title(), text, "ab" * 32, len(text), 1, "markdown"
    )


DOCS = [
    _doc("garage", "My car needs new tyres before winter. The garage opens at nine."),
    _doc("harbour", "The boat is moored in the harbour. Sailing starts in May."),
    _doc("kitchen", "Bread dough rises overnight in the kitchen."),
]


def _committed(embedder: FakeEmbedder | None, data: Path | None = None) -> Corpus:
    c = Corpus(ANALYZER, data, embedder=embedder)
    c.load()
    c.stage(c.prepare(DOCS), [])
    c.commit()
    return c


def _search(c: Corpus, *queries: str, **params: object) -> tuple[list[str], str]:
    hits, retrieval, _ = c.passages(list(queries), PassageParams(**params))  # type: ignore[arg-type]
    return [h.document_id for h in hits], retrieval


def test_dense_finds_a_paraphrase_bm25_cannot() -> None:
    c = _committed(FakeEmbedder())
    ids, retrieval = _search(c, "automobile", top_k=1)
    assert retrieval == "hybrid"
    assert ids == ["local:/notes/garage.md"]
    assert _search(_committed(None), "automobile") == ([], "bm25")


def test_without_an_embedder_passages_are_ranked_by_bm25_alone() -> None:
    c = _committed(None)
    hits, retrieval, documents = c.passages(["harbour boat"], PassageParams(top_k=3))
    assert (retrieval, documents) == ("bm25", 3)
    assert [h.document_id for h in hits] == ["local:/notes/harbour.md"]
    assert (hits[0].lexical_rank, hits[0].dense_rank, hits[0].index) == (1, 0, 0)
    assert "moored in the harbour" in hits[0].text
    assert c.stats().embedded == 0


def test_a_passage_found_by_both_retrievers_and_several_queries_ranks_first() -> None:
    c = _committed(FakeEmbedder())
    # The fusion alone (no relevance floor): the fake model's cosines are not a real model's.
    unfloored = PassageParams(top_k=3, min_cosine=-1.0, min_bm25=0.0, strong_bm25=0.0)
    hits, _, _ = c.passages(["vessel", "sailing harbour", "dough"], unfloored)
    assert hits[0].document_id == "local:/notes/harbour.md"
    assert hits[0].lexical_rank == 1
    assert hits[0].dense_rank == 1
    assert hits[0].score > hits[1].score


def test_passages_are_embedded_once_at_commit_and_kept_passages_reuse_their_vectors() -> None:
    embedder = FakeEmbedder()
    c = _committed(embedder)
    first = len(embedder.texts)
    assert first == c.stats().chunks == c.stats().embedded == 3
    changed = _doc("kitchen", "Rye bread needs a sourdough starter.")
    c.stage(c.prepare([changed]), [])
    c.commit()
    assert embedder.texts[first:] == ["# Kitchen\n\nRye bread needs a sourdough starter."]
    assert c.stats().embedded == 3
    c.commit()  # nothing staged: nothing embedded
    assert len(embedder.texts) == first + 1
    assert _search(c, "automobile", top_k=1)[0] == ["local:/notes/garage.md"]


def test_vectors_persist_and_a_new_model_re_embeds_at_the_next_commit(tmp_path: Path) -> None:
    _committed(FakeEmbedder(), tmp_path)
    same = FakeEmbedder()
    reloaded = Corpus(ANALYZER, tmp_path, embedder=same)
    reloaded.load()
    assert reloaded.stats().embedding_model == "fake-v1"
    assert _search(reloaded, "automobile", top_k=1) == (["local:/notes/garage.md"], "hybrid")
    assert same.texts == ["automobile"]  # only the query: stored vectors were loaded
    other = FakeEmbedder("fake-v2")
    upgraded = Corpus(ANALYZER, tmp_path, embedder=other)
    upgraded.load()
    assert _search(upgraded, "automobile")[1] == "bm25"  # another model's vectors: unused
    stats = upgraded.commit()  # nothing staged, but the vectors are missing: all re-embedded
    assert (stats.embedded, stats.embedding_model) == (3, "fake-v2")
    assert _search(upgraded, "automobile", top_k=1)[1] == "hybrid"


def test_max_per_document_and_id_prefix() -> None:
    long = " ".join(f"Sentence {i} is about the harbour boat." for i in range(120))
    c = Corpus(ANALYZER, embedder=FakeEmbedder(), chunk_words=40)
    c.stage(c.prepare([*DOCS, _doc("log", long)]), [])
    c.commit()
    ids, _ = _search(c, "harbour boat", top_k=10, max_per_document=2)
    assert ids.count("local:/notes/log.md") == 2
    ids, _ = _search(c, "harbour boat", top_k=10, max_per_document=0)
    assert ids.count("local:/notes/log.md") > 2
    ids, _ = _search(c, "harbour boat", top_k=10, id_prefix="local:/notes/harb")
    assert ids == ["local:/notes/harbour.md"]


def test_load_embedder_falls_back_to_none_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="index.dense"):
        assert load_embedder(True, module="quarry_embed_does_not_exist") is None
    assert "BM25 alone" in caplog.text
    assert load_embedder(False) is None


class BrokenEmbedder(FakeEmbedder):
    """Fails every call after ``good`` successful ones."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.good <= 0:
            raise RuntimeError("onnxruntime exploded")
        self.good -= 1
        return super().embed(texts)


def test_a_model_failing_at_commit_or_query_time_degrades_to_bm25(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="index.corpus"):
        c = _committed(BrokenEmbedder(good=0))
        assert (c.stats().documents, c.stats().embedded) == (3, 0)
        assert _search(c, "harbour") == (["local:/notes/harbour.md"], "bm25")
        works_once = BrokenEmbedder(good=1)  # embeds the passages, then fails on the query
        c = _committed(works_once)
        assert c.stats().embedded == 3
        assert _search(c, "harbour") == (["local:/notes/harbour.md"], "bm25")
    assert "this commit is searchable by BM25 alone" in caplog.text
    assert "embedding the queries failed" in caplog.text


def test_new_documents_are_searchable_by_bm25_while_their_passages_are_embedded() -> None:
    seen: list[tuple[int, int]] = []
    c = Corpus(ANALYZER, embedder=FakeEmbedder())
    c.stage(c.prepare(DOCS), [])
    c.commit()

    class Watching(FakeEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if any("rows out at dawn" in text for text in texts):  # the commit's embedding pass
                hits, _, _ = c.passages(["lighthouse keeper"], PassageParams(top_k=10))
                seen.extend((h.lexical_rank, h.dense_rank) for h in hits if "dawn" in h.text)
            return super().embed(texts)

    c._embedder = Watching()  # the same model name: stored vectors stay valid
    c.stage(c.prepare([_doc("lighthouse", "The lighthouse keeper rows out at dawn.")]), [])
    stats = c.commit()
    # During the embedding pass the new passage was already found, by BM25 alone (no vector
    # yet); after it, the old passages kept their vectors and only the new one was embedded.
    assert seen == [(1, 0)]
    assert (stats.chunks, stats.embedded) == (4, 4)
    hits, _, _ = c.passages(["lighthouse keeper"], PassageParams(top_k=1))
    assert hits[0].dense_rank == 1


async def test_a_start_with_a_new_model_embeds_the_stored_passages_in_the_background(
    tmp_path: Path,
) -> None:
    from index.config import Settings
    from index.service import IndexServicer

    _committed(None, tmp_path)  # stored without vectors (the model was missing then)
    embedder = FakeEmbedder()
    corpus = Corpus(ANALYZER, tmp_path, embedder=embedder)
    servicer = IndexServicer(Settings(port=0), corpus)
    await servicer.warm_up()
    assert servicer._backfill is not None
    stats = await servicer._backfill
    assert (stats.embedded, stats.embedding_model) == (3, "fake-v1")
    assert len(embedder.texts) == 3
    again = IndexServicer(Settings(port=0), Corpus(ANALYZER, tmp_path, embedder=FakeEmbedder()))
    await again.warm_up()
    assert again._backfill is None  # the vectors were persisted: nothing to do


def test_the_floor_measures_a_question_by_its_subject_not_its_question_words() -> None:
    # One note: every term of it is rare, so "what" (no passage holds it) weighed as much as
    # the subject and put the only matching note under the BM25 floor (share 0.156 < 0.15).
    c = Corpus(ANALYZER)
    c.stage(c.prepare([_doc("vault", "The vault combination is 31-41-59.")]), [])
    c.commit()
    assert _search(c, "What is the vault combination?")[0] == ["local:/notes/vault.md"]
    assert _search(c, "What is the capital of France?")[0] == []
