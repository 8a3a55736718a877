"""Walking a documents folder and planning an incremental refresh (pure apart from the walk).

The plan compares what is on disk (path, size, mtime) with what the corpus already holds
(``ListDocuments``): files whose size and mtime are unchanged are not even re-hashed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.adapters.grpc.corpus import LOCAL_PREFIX, DocInfo

logger = logging.getLogger(__name__)

#: Extension -> (kind, the content type Reader.Extract gets). Markdown goes as text/markdown,
#: which the reader passes through as is (headings and lists survive for chunking).
KINDS: dict[str, tuple[str, str]] = {
    ".html": ("html", "text/html"),
    ".htm": ("html", "text/html"),
    ".xhtml": ("html", "application/xhtml+xml"),
    ".md": ("markdown", "text/markdown"),
    ".markdown": ("markdown", "text/markdown"),
    ".txt": ("text", "text/plain"),
    ".pdf": ("pdf", "application/pdf"),
}


def doc_id(path: str) -> str:
    """The corpus id (and citation URL) of the file at absolute ``path``."""
    return LOCAL_PREFIX + path


def id_prefix(root: str) -> str:
    """The id prefix of every document under ``root`` (a directory)."""
    return doc_id(root.rstrip("/") + "/")


def classify(path: str) -> tuple[str, str] | None:
    """(kind, content type) for a supported file name, else None."""
    return KINDS.get(Path(path).suffix.lower())


@dataclass(frozen=True)
class FileEntry:
    """A regular file found by the walk."""

    path: str
    size: int
    mtime_ns: int
    kind: str
    content_type: str

    @property
    def id(self) -> str:
        """Its corpus id."""
        return doc_id(self.path)


@dataclass
class Walk:
    """What a walk found: supported files, and what it skipped or could not list."""

    files: list[FileEntry] = field(default_factory=list)
    unsupported: int = 0
    too_large: int = 0
    # Directories that could not be listed: nothing under them is removed from the index.
    unlisted: list[str] = field(default_factory=list)


def _inside(path: str, root_real: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real.rstrip("/") + "/")


def walk(root: str, *, max_bytes: int) -> Walk:
    """Every supported file under ``root`` (blocking: run it in a thread).

    Hidden files and directories are skipped; symlinked directories are not followed, and a
    symlinked file is taken only when it points inside ``root``.
    """
    found = Walk()
    root_real = os.path.realpath(root)

    def failed(err: OSError) -> None:
        logger.warning("cannot list a folder", extra={"path": err.filename, "error": err.strerror})
        found.unlisted.append(str(err.filename))

    for folder, dirs, names in os.walk(root, onerror=failed, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = str(Path(folder, name))
            kind = classify(name)
            if kind is None:
                found.unsupported += 1
                continue
            try:
                st = Path(path).stat()  # follows a symlink: its target's size and mtime
            except OSError as err:
                logger.warning("cannot stat a file", extra={"path": path, "error": err.strerror})
                continue
            if not stat.S_ISREG(st.st_mode) or not _inside(path, root_real):
                logger.info("skipped: not a regular file inside the folder", extra={"path": path})
                found.unsupported += 1
                continue
            if st.st_size > max_bytes:
                logger.info("skipped: too large", extra={"path": path, "bytes": st.st_size})
                found.too_large += 1
                continue
            found.files.append(FileEntry(path, st.st_size, st.st_mtime_ns, *kind))
    return found


@dataclass(frozen=True)
class Plan:
    """What a refresh has to do."""

    # New files, and files whose size or mtime changed: hash them (and extract if changed).
    check: list[FileEntry]
    # Ids whose size and mtime match the corpus: nothing to do.
    unchanged: list[str]
    # Ids the corpus holds under the root that are no longer on disk.
    remove: list[str]


def plan(found: Walk, known: Mapping[str, DocInfo]) -> Plan:
    """Diff the walk against the corpus's staged view of the same root."""
    check: list[FileEntry] = []
    unchanged: list[str] = []
    on_disk: set[str] = set()
    for entry in found.files:
        on_disk.add(entry.id)
        info = known.get(entry.id)
        if info is not None and info.size == entry.size and info.mtime_ns == entry.mtime_ns:
            unchanged.append(entry.id)
        else:
            check.append(entry)
    unlisted = [id_prefix(d) for d in found.unlisted]
    remove = [i for i in known if i not in on_disk and not any(i.startswith(p) for p in unlisted)]
    return Plan(check, unchanged, sorted(remove))


def sha256_file(path: str) -> tuple[bytes, str]:
    """The file's bytes and their hex sha256 (blocking: run it in a thread)."""
    data = Path(path).read_bytes()
    return data, hashlib.sha256(data).hexdigest()


def batches(sizes: Iterable[int], *, max_items: int, max_bytes: int) -> list[range]:
    """Consecutive index ranges with at most ``max_items`` items and ``max_bytes`` in total.

    An item larger than ``max_bytes`` travels alone.
    """
    out: list[range] = []
    start = count = total = 0
    for i, size in enumerate(sizes):
        if count and (count >= max_items or total + size > max_bytes):
            out.append(range(start, i))
            start, count, total = i, 0, 0
        count += 1
        total += size
    if count:
        out.append(range(start, start + count))
    return out
