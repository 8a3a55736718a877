"""Walking a folder and planning an incremental refresh (pure apart from a temporary folder)."""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.adapters.corpus.indexer import title_of
from orchestrator.adapters.corpus.scan import Walk, batches, classify, doc_id, id_prefix, plan, walk
from orchestrator.adapters.grpc.corpus import DocInfo


def _write(path: Path, data: bytes | str = "hello") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def test_classify_by_extension() -> None:
    assert classify("/a/b.HTML") == ("html", "text/html")
    assert classify("/a/b.md") == ("markdown", "text/markdown")
    assert classify("/a/b.markdown") == ("markdown", "text/markdown")
    assert classify("/a/b.txt") == ("text", "text/plain")
    assert classify("/a/b.pdf") == ("pdf", "application/pdf")
    assert classify("/a/b.xhtml") == ("html", "application/xhtml+xml")
    assert classify("/a/b.docx") is None
    assert classify("/a/Makefile") is None


def test_ids_are_local_absolute_paths() -> None:
    assert doc_id("/srv/notes/a.md") == "local:/srv/notes/a.md"
    assert id_prefix("/srv/notes") == "local:/srv/notes/"
    assert id_prefix("/srv/notes/") == "local:/srv/notes/"


def test_walk_skips_hidden_unsupported_large_and_foreign_links(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    _write(root / "a.md")
    _write(root / "sub" / "b.html", "<p>x</p>")
    _write(root / "sub" / "c.txt")
    _write(root / ".git" / "d.md")
    _write(root / ".hidden.md")
    _write(root / "e.docx")
    _write(root / "big.txt", "x" * 5000)
    (root / "dir.md").mkdir()  # a directory with a document's name is just a folder
    os.mkfifo(root / "pipe.md")  # never opened: not a regular file
    outside = _write(tmp_path / "outside.md")
    (root / "link-out.md").symlink_to(outside)
    (root / "link-in.md").symlink_to(root / "a.md")
    (root / "linked-dir").symlink_to(tmp_path)
    found = walk(str(root), max_bytes=4096)
    names = sorted(Path(f.path).relative_to(root).as_posix() for f in found.files)
    assert names == ["a.md", "link-in.md", "sub/b.html", "sub/c.txt"]
    assert found.too_large == 1
    assert found.unsupported == 3  # e.docx, pipe.md, link-out.md
    assert found.unlisted == []
    kinds = {Path(f.path).name: f.kind for f in found.files}
    assert kinds["b.html"] == "html"
    assert kinds["c.txt"] == "text"


def _info(path: str, size: int = 5, mtime: int = 1, digest: str = "h") -> DocInfo:
    return DocInfo(doc_id(path), digest, size, mtime)


def test_plan_checks_only_new_or_touched_files_and_removes_vanished(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    same = _write(root / "same.md")
    touched = _write(root / "touched.md")
    new = _write(root / "new.md")
    found = walk(str(root), max_bytes=4096)
    st = {p: p.stat() for p in (same, touched, new)}
    known = {
        doc_id(str(same)): _info(str(same), st[same].st_size, st[same].st_mtime_ns),
        doc_id(str(touched)): _info(str(touched), st[touched].st_size, 1),
        doc_id(str(root / "gone.md")): _info(str(root / "gone.md")),
    }
    todo = plan(found, known)
    assert sorted(Path(e.path).name for e in todo.check) == ["new.md", "touched.md"]
    assert todo.unchanged == [doc_id(str(same))]
    assert todo.remove == [doc_id(str(root / "gone.md"))]


def test_plan_keeps_documents_under_folders_it_could_not_list() -> None:
    found = Walk(files=[], unlisted=["/r/locked"])
    known = {doc_id("/r/locked/a.md"): _info("/r/locked/a.md"), doc_id("/r/b.md"): _info("/r/b.md")}
    assert plan(found, known).remove == [doc_id("/r/b.md")]


def test_batches_bound_items_and_bytes() -> None:
    assert batches([], max_items=2, max_bytes=10) == []
    assert batches([1, 1, 1, 1, 1], max_items=2, max_bytes=10) == [
        range(0, 2),
        range(2, 4),
        range(4, 5),
    ]
    assert batches([4, 4, 4, 20, 1], max_items=9, max_bytes=10) == [
        range(0, 2),
        range(2, 3),
        range(3, 4),
        range(4, 5),
    ]


def test_title_prefers_extracted_then_heading_then_file_name() -> None:
    assert title_of("# Heading\ntext", "Meta title", "/r/a.md") == "Meta title"
    assert title_of("intro\n\n## Setup ##\ntext", "", "/r/a.md") == "Setup"
    assert title_of("no heading", "  ", "/r/notes.txt") == "notes.txt"
