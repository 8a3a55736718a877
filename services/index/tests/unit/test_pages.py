"""PDF pages, owner allow-lists and when a document was indexed: a passage carries the page it
was cut from (never spanning two), survives a restart, and an index written before these were
kept still loads."""

from __future__ import annotations

import json
from pathlib import Path

from index import storage
from index.corpus import Corpus
from index.passages import PassageParams
from index.types import Document
from quarry_text.analyzer import Analyzer

ANALYZER = Analyzer()
PAGES = [
    "Annual report of the lighthouse trust.",
    "",  # an empty page still counts
    "The keeper logged a storm surge of four metres.",
    "The ferry pier was rebuilt in nineteen eighty seven.",
]


def pdf(doc_id: str = "local:/docs/report.pdf", kind: str = "pdf") -> Document:
    text = "\n\f\n".join(PAGES)
    return Document(doc_id, "Report", text, "ab" * 16, len(text), 1, kind)


def committed(data: Path | None, *docs: Document) -> Corpus:
    c = Corpus(ANALYZER, data)
    c.load()
    c.stage(c.prepare(docs), [])
    c.commit()
    return c


def pages_of(c: Corpus, query: str, **params: object) -> list[tuple[str, int]]:
    hits, _, _ = c.passages([query], PassageParams(top_k=5, **params))  # type: ignore[arg-type]
    return [(h.document_id, h.page) for h in hits]


def test_a_passage_carries_its_page_across_a_restart(tmp_path: Path) -> None:
    c = committed(tmp_path, pdf())
    assert pages_of(c, "storm surge keeper") == [("local:/docs/report.pdf", 3)]
    assert pages_of(c, "ferry pier rebuilt") == [("local:/docs/report.pdf", 4)]
    (info,) = c.documents()
    assert len(info.page_starts) == 4
    assert info.indexed_at.endswith("Z")
    again = Corpus(ANALYZER, tmp_path)
    again.load()
    assert pages_of(again, "ferry pier rebuilt") == [("local:/docs/report.pdf", 4)]
    assert again.documents() == c.documents()


def test_only_pdfs_are_paged() -> None:
    c = committed(None, pdf("local:/docs/notes.txt", kind="text"))
    assert pages_of(c, "ferry pier rebuilt") == [("local:/docs/notes.txt", 0)]
    assert c.documents()[0].page_starts == ()


def test_id_prefixes_narrow_within_id_prefix() -> None:
    c = committed(
        None, pdf("local:/shared/a.pdf"), pdf("local:/up/alice/b.pdf"), pdf("local:/up/bob/c.pdf")
    )
    alice = ("local:/shared/", "local:/up/alice/")
    found = {d for d, _ in pages_of(c, "ferry pier rebuilt", max_per_document=1, id_prefixes=alice)}
    assert found == {"local:/shared/a.pdf", "local:/up/alice/b.pdf"}
    pinned = pages_of(c, "ferry pier rebuilt", id_prefix="local:/up/", id_prefixes=alice)
    assert {d for d, _ in pinned} == {"local:/up/alice/b.pdf"}


def test_an_index_written_before_pages_were_kept_still_loads(tmp_path: Path) -> None:
    committed(tmp_path, pdf())
    root = tmp_path / "corpus"
    gen = root / (root / storage.CURRENT).read_text().strip()
    manifest = json.loads((gen / "manifest.json").read_text())
    manifest["documents"] = [row[:7] for row in manifest["documents"]]  # the old 7-field rows
    (gen / "manifest.json").write_text(json.dumps(manifest))
    old = Corpus(ANALYZER, tmp_path)
    old.load()
    (info,) = old.documents()
    assert (info.indexed_at, info.page_starts) == ("", ())
    assert pages_of(old, "ferry pier rebuilt") == [("local:/docs/report.pdf", 0)]
