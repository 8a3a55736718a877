"""The index with the real embedding model (all-MiniLM-L6-v2 via quarry_embed, no network):
passages are embedded at commit and a paraphrase with no shared word is still found."""

from __future__ import annotations

from pathlib import Path

import pytest
from index.corpus import Corpus
from index.dense import Embedder, load_embedder
from index.passages import PassageParams
from index.types import Document
from quarry_text.analyzer import Analyzer


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    loaded = load_embedder(True, threads=1)
    assert loaded is not None, "quarry_embed did not load: see the warning in the log"
    return loaded


def _doc(name: str, text: str) -> Document:
    return Document(f"local:/notes/{name}.md", name, text, "cd" * 32, len(text), 1, "markdown")


def test_a_paraphrase_is_found_through_the_stored_vectors(
    embedder: Embedder, tmp_path: Path
) -> None:
    docs = [
        _doc("garage", "My car needs new tyres before winter; the mechanic is booked."),
        _doc("harbour", "The sailing boat is moored in the harbour until May."),
        _doc("kitchen", "Sourdough bread rises overnight on the kitchen counter."),
    ]
    c = Corpus(Analyzer(), tmp_path, embedder=embedder)
    c.stage(c.prepare(docs), [])
    stats = c.commit()
    assert (stats.embedded, stats.embedding_model) == (3, embedder.name)
    reopened = Corpus(Analyzer(), tmp_path, embedder=embedder)
    reopened.load()
    # No word of the query occurs in any document: BM25 finds nothing, dense does.
    hits, retrieval, _ = reopened.passages(["automobile maintenance"], PassageParams(top_k=1))
    assert retrieval == "hybrid"
    assert [(h.document_id, h.lexical_rank) for h in hits] == [("local:/notes/garage.md", 0)]
    vectors = reopened._snapshot.vectors  # stored unit vectors, one per passage
    assert vectors.shape == (3, 384)
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-3
