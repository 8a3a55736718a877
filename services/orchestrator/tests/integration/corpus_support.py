"""Shared by the local-documents integration tests: a world whose real index holds a corpus
persisted in a data folder, a real reader that extracts the files, and a generated folder of
mixed documents with broken ones."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from index.config import Settings as IndexSettings
from index.server import build_server as build_index
from quarry_common.grpc_server import GrpcServer

from services.orchestrator.tests.integration.support import World, serve_world
from services.reader.tests.pages import make_pdf

FACT = "The lighthouse keeper's passphrase is amber-falcon-42."


def index_server(data_dir: str) -> GrpcServer:
    """The real index on 127.0.0.1, port 0, persisting its corpus under ``data_dir``."""
    return build_index(IndexSettings(port=0, data_dir=Path(data_dir)))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def corpus_world() -> AsyncIterator[World]:
    """Pages, a real reader, ranker and a persisting index, shared by a module."""
    with tempfile.TemporaryDirectory() as data_dir:
        async with serve_world(index_server(data_dir)) as running:
            yield running


def make_folder(root: Path, good: int) -> dict[str, int]:
    """``good`` documents (Markdown, text, HTML and real PDFs in turn) plus broken files.

    Returns the expected counts of a first refresh.
    """
    for i in range(good):
        folder = root / f"area{i % 9}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"Field note {i} records observation{i} about the coastline."
        match i % 4:
            case 0:
                (folder / f"note{i}.md").write_text(f"# Note {i}\n\n{text}\n\n- item one\n")
            case 1:
                (folder / f"note{i}.txt").write_text(text + "\n")
            case 2:
                body = "".join(f"<p>{text} Paragraph {p}.</p>" for p in range(4))
                html = f"<html><head><title>Note {i}</title></head><body><article>{body}"
                (folder / f"note{i}.html").write_text(html + "</article></body></html>")
            case _:
                (folder / f"note{i}.pdf").write_bytes(make_pdf([text], title=f"Note {i}"))
    (root / "lighthouse.md").write_text(f"# Lighthouse\n\n{FACT}\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
    (root / "junk.md").write_bytes(os.urandom(64) + b"\x00" * 64)
    (root / "empty.txt").write_bytes(b"")
    (root / "image.png").write_bytes(b"\x89PNG\r\n")
    (root / "x.md").mkdir()  # a directory with a document's name
    os.mkfifo(root / "pipe.txt")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD.md").write_text("# hidden")
    return {"total": good + 4, "added": good + 1, "failed": 3, "skipped": 2}
