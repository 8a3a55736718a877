"""The corpus on disk: one directory per committed generation and a ``CURRENT`` pointer.

A commit writes ``gen-NNNNNNNN.tmp/`` (texts, arrays, vocabulary, then a manifest with a
CRC-32 of every other file), fsyncs it, renames it to ``gen-NNNNNNNN/``, then replaces
``CURRENT`` (write a temporary file, fsync, rename, fsync the directory). A crash or kill
at any point leaves ``CURRENT`` naming a complete earlier generation; leftovers are removed
by the next commit. Texts are memory-mapped on load, so the index does not hold every
document in RAM.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import re
import shutil
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from index import textsettings
from index.snapshot import Merged, Snapshot, TextBlob, from_merged, no_vectors
from index.types import DocumentInfo

logger = logging.getLogger(__name__)

# 2: passages of a recorded size (``passage_words``) and, optionally, their embeddings.
FORMAT = 2
CURRENT = "CURRENT"
_GENERATION = re.compile(r"gen-(\d{8})")
_ARRAYS = ("doc_start", "chunk_len", "term_ptr", "post_chunk", "post_tf")
_COPY_BLOCK = 1 << 20


class CorruptIndexError(Exception):
    """The persisted index is missing pieces or does not match its manifest."""


class BuiltOtherwiseError(Exception):
    """The persisted index is sound but was built with other text settings (analyser,
    chunker, passage size): its terms are not the ones queries are analysed to."""

    def __init__(self, differences: list[str]) -> None:
        super().__init__("; ".join(differences))
        self.differences = differences


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write(path: Path, parts: Sequence[bytes | memoryview]) -> int:
    """Write ``parts`` back to back, fsync, and return the CRC-32 of what was written."""
    crc = 0
    with path.open("wb") as f:
        for part in parts:
            # Views of a memory-mapped file are copied in blocks, never all at once.
            for i in range(0, len(part), _COPY_BLOCK):
                block = part[i : i + _COPY_BLOCK]
                crc = zlib.crc32(block, crc)
                f.write(block)
        f.flush()
        os.fsync(f.fileno())
    return crc


def _crc(path: Path) -> int:
    crc = 0
    with path.open("rb") as f:
        while block := f.read(_COPY_BLOCK):
            crc = zlib.crc32(block, crc)
    return crc


def _map(path: Path) -> bytes | mmap.mmap:
    """The file's bytes, memory-mapped (an empty file cannot be mapped)."""
    with path.open("rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def generations(root: Path) -> list[int]:
    """Sequence numbers of the generation directories (complete or not) under ``root``."""
    out = []
    for p in root.iterdir() if root.is_dir() else ():
        m = _GENERATION.match(p.name)
        if m:
            out.append(int(m.group(1)))
    return out


def _manifest(
    merged: Merged,
    committed_at: str,
    crcs: dict[str, int],
    passage_words: int,
    text: dict[str, Any],
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "committed_at": committed_at,
        "passage_words": passage_words,
        "text": text,
        "embedding_model": merged.embedding_model,
        "crc32": crcs,
        "documents": [
            [
                i.id,
                i.content_hash,
                i.size,
                i.mtime_ns,
                i.title,
                i.kind,
                i.chunks,
                i.indexed_at,
                list(i.page_starts),
            ]
            for i in merged.infos
        ],
    }


def write(
    root: Path,
    seq: int,
    merged: Merged,
    committed_at: str,
    passage_words: int,
    text: dict[str, Any],
) -> Snapshot:
    """Persist ``merged`` as generation ``seq``, point ``CURRENT`` at it, and return the
    snapshot over the written files (``passage_words``: the size its passages were cut to;
    ``text``: the analyser's and chunker's record, :func:`textsettings.current`)."""
    root.mkdir(parents=True, exist_ok=True)
    name = f"gen-{seq:08d}"
    tmp = root / f"{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    crcs = {
        "markdown.bin": _write(tmp / "markdown.bin", merged.markdown_parts),
        "chunks.bin": _write(tmp / "chunks.bin", merged.chunk_parts),
        "vocab.txt": _write(tmp / "vocab.txt", ["\n".join(merged.vocab).encode()]),
    }
    arrays = {k: getattr(merged, k) for k in _ARRAYS}
    arrays |= {"markdown_offsets": merged.markdown_offsets, "chunk_offsets": merged.chunk_offsets}
    with (tmp / "arrays.npz").open("wb") as f:
        np.savez(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    crcs["arrays.npz"] = _crc(tmp / "arrays.npz")
    if merged.embedding_model:
        with (tmp / "vectors.npy").open("wb") as f:
            np.save(f, merged.vectors)
            f.flush()
            os.fsync(f.fileno())
        crcs["vectors.npy"] = _crc(tmp / "vectors.npy")
    manifest = json.dumps(
        _manifest(merged, committed_at, crcs, passage_words, text), ensure_ascii=False
    )
    _write(tmp / "manifest.json", [manifest.encode()])
    _fsync_dir(tmp)
    final = root / name
    tmp.rename(final)
    _fsync_dir(root)
    point_current(root, name)
    _remove_others(root, name)
    return _open(final, merged, committed_at)


def point_current(root: Path, name: str) -> None:
    """Atomically make ``CURRENT`` name generation ``name`` (the commit point)."""
    tmp = root / f"{CURRENT}.tmp"
    _write(tmp, [f"{name}\n".encode()])
    tmp.replace(root / CURRENT)
    _fsync_dir(root)


def _remove_others(root: Path, keep: str) -> None:
    for p in root.iterdir():
        if p.name != keep and _GENERATION.match(p.name):
            shutil.rmtree(p, ignore_errors=True)


def _open(gen: Path, merged: Merged, committed_at: str) -> Snapshot:
    markdown = TextBlob(_map(gen / "markdown.bin"), merged.markdown_offsets)
    chunks = TextBlob(_map(gen / "chunks.bin"), merged.chunk_offsets)
    if merged.embedding_model:  # serve the mapped file, so the built array can be freed
        merged = replace(merged, vectors=np.load(gen / "vectors.npy", mmap_mode="r"))
    return from_merged(merged, markdown, chunks, committed_at)


def _read(gen: Path, passage_words: int, text: dict[str, Any]) -> Snapshot:
    """The snapshot stored in ``gen``; CorruptIndexError on any damage, BuiltOtherwiseError
    when its passages were cut to another size or its terms made by other text settings
    (stemming, stop-words, compound terms, chunking: BM25 would silently degrade)."""
    manifest = json.loads((gen / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise CorruptIndexError(f"unknown format {manifest.get('format')!r}")
    differences = textsettings.differences(manifest, text, passage_words)
    if differences:
        raise BuiltOtherwiseError(differences)
    for file, crc in manifest["crc32"].items():
        if _crc(gen / file) != crc:
            raise CorruptIndexError(f"{gen.name}/{file} does not match its checksum")
    with np.load(gen / "arrays.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    vocab_text = (gen / "vocab.txt").read_text(encoding="utf-8")
    model = str(manifest.get("embedding_model") or "")
    # Memory-mapped like the texts: the vectors are read only where a query touches them.
    vectors = np.load(gen / "vectors.npy", mmap_mode="r") if model else no_vectors()
    if model and (vectors.dtype != np.float32 or vectors.ndim != 2):
        raise CorruptIndexError("vectors.npy is not a float32 matrix")
    snapshot = Snapshot(
        infos=tuple(_info(row) for row in manifest["documents"]),
        doc_start=arrays["doc_start"],
        chunk_len=arrays["chunk_len"],
        vocab=tuple(vocab_text.split("\n")) if vocab_text else (),
        term_ptr=arrays["term_ptr"],
        post_chunk=arrays["post_chunk"],
        post_tf=arrays["post_tf"],
        markdown=TextBlob(_map(gen / "markdown.bin"), arrays["markdown_offsets"]),
        chunk_text=TextBlob(_map(gen / "chunks.bin"), arrays["chunk_offsets"]),
        committed_at=str(manifest["committed_at"]),
        vectors=vectors,
        embedding_model=model,
    )
    snapshot.check()
    return snapshot


def _info(row: list[Any]) -> DocumentInfo:
    """A manifest's document row; rows written before ``indexed_at`` and ``page_starts`` were
    kept have seven fields (same format: the two are optional)."""
    extra = row[7:9]
    indexed_at = str(extra[0]) if extra else ""
    pages = tuple(int(n) for n in extra[1]) if len(extra) > 1 else ()
    doc, content_hash, size, mtime_ns, title, kind, chunks = row[:7]
    return DocumentInfo(
        doc, content_hash, size, mtime_ns, title, kind, chunks, indexed_at, page_starts=pages
    )


def load(root: Path, passage_words: int, text: dict[str, Any]) -> tuple[Snapshot, int] | None:
    """The generation ``CURRENT`` names and its sequence number; None when nothing was
    ever committed. Raises CorruptIndexError when it is damaged or incomplete,
    BuiltOtherwiseError when it was built with other text settings (see ``_read``)."""
    current = root / CURRENT
    if not current.exists():
        return None
    name = current.read_text(encoding="utf-8").strip()
    m = _GENERATION.fullmatch(name)
    if not m or not (root / name).is_dir():
        raise CorruptIndexError(f"{CURRENT} names no generation: {name[:40]!r}")
    try:
        snapshot = _read(root / name, passage_words, text)
    except (CorruptIndexError, BuiltOtherwiseError):
        raise
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as err:
        raise CorruptIndexError(f"{name}: {type(err).__name__}: {err}") from err
    return snapshot, int(m.group(1))
