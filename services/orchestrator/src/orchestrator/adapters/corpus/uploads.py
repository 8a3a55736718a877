"""Uploaded documents: checked, kept in the owner's upload folder, indexed at once.

Nothing is ever written outside ORCHESTRATOR_UPLOAD_DIR: a file is streamed into a private
staging folder inside it (``.incoming/<random>/``, skipped by every walk: its name starts with
a dot), created with ``O_EXCL | O_NOFOLLOW`` under a name of our own (never the client's),
counted as it arrives and refused at the size limit. Only when every file of a request has
passed (its name, its type by content, the reader's extraction) are they moved into the
owner's folder, under their normalised names, and indexed; any refusal removes the staging
folder, so a refused request leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.adapters.corpus.documents import Documents
from orchestrator.adapters.corpus.indexer import title_of
from orchestrator.adapters.corpus.scan import KINDS, doc_id, id_prefix, sha256_file
from orchestrator.adapters.grpc.corpus import CorpusClient, Extractor, LocalDoc
from orchestrator.core.ask.domain import CorpusError
from orchestrator.core.errors import DomainError, ErrorKind
from orchestrator.core.principals import Principal

logger = logging.getLogger(__name__)

STAGING = ".incoming"
MAX_NAME_BYTES = 200
EXTRACT_TIMEOUT_S = 60.0
CALL_TIMEOUT_S = 60.0
COMMIT_TIMEOUT_S = 3600.0
# Magic numbers of archives and compressed data: never a document, often a bomb.
_ARCHIVES = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"Rar!")
_SNIFF_BYTES = 64 * 1024


class UploadRefused(DomainError):
    """A file the server will not keep (the subclasses say why)."""

    kind = ErrorKind.INVALID
    title = "Upload refused"


class BadFileName(UploadRefused):
    kind = ErrorKind.INVALID
    title = "Invalid file name"
    code = "bad_file_name"


class UnsupportedUpload(UploadRefused):
    kind = ErrorKind.UNSUPPORTED
    title = "Unsupported file type"
    code = "unsupported_type"


class UploadTooLarge(UploadRefused):
    kind = ErrorKind.TOO_LARGE
    title = "File too large"
    code = "file_too_large"


class TooManyFiles(UploadRefused):
    kind = ErrorKind.INVALID
    title = "Too many files"
    code = "too_many_files"


class UploadQuota(UploadRefused):
    kind = ErrorKind.CONFLICT
    title = "Upload limit reached"
    code = "upload_quota"


class NotExtractable(UploadRefused):
    kind = ErrorKind.INVALID
    title = "No text could be extracted"
    code = "not_extractable"


class UploadsOff(DomainError):
    kind = ErrorKind.UNAVAILABLE
    title = "Uploads are off"


def safe_name(raw: str) -> str:
    """The client's file name, normalised (NFC, outer spaces dropped), or BadFileName /
    UnsupportedUpload. A name with a path in it is refused, not cut down to its last part:
    a client sending ``../x`` is not a browser, and guessing what it meant helps no one."""
    name = unicodedata.normalize("NFC", raw).strip()
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise BadFileName(f"{_shown(raw)} is not a plain file name (no folders, no '..').")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        raise BadFileName(f"{_shown(raw)} contains control characters.")
    if name.startswith("."):
        raise BadFileName(f"{_shown(raw)} is a hidden file name (it starts with a dot).")
    if len(name.encode()) > MAX_NAME_BYTES:
        raise BadFileName(f"The file name is longer than {MAX_NAME_BYTES} bytes.")
    if Path(name).suffix.lower() not in KINDS:
        raise UnsupportedUpload(f"{_shown(name)}: send PDF, HTML, Markdown or text ({_exts()}).")
    return name


def _unlink_all(ids: list[str]) -> None:
    for i in ids:
        Path(i.removeprefix("local:")).unlink(missing_ok=True)


def _exts() -> str:
    return ", ".join(sorted(KINDS))


def _shown(name: str) -> str:
    return repr(name if len(name) <= 80 else name[:79] + "…")


def sniff(name: str, head: bytes) -> None:
    """Refuse a file whose bytes are not what its name says (UnsupportedUpload)."""
    kind = KINDS[Path(name).suffix.lower()][0]
    if head.startswith(_ARCHIVES):
        raise UnsupportedUpload(f"{_shown(name)} is an archive or compressed file; send documents.")
    if kind == "pdf":
        if not head.startswith(b"%PDF-"):
            raise UnsupportedUpload(f"{_shown(name)} is named .pdf but is not a PDF.")
        return
    if b"\x00" in head:
        raise UnsupportedUpload(f"{_shown(name)} is binary, not {kind} text.")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head) - 4:  # a character cut at the end of the sample is fine
            raise UnsupportedUpload(f"{_shown(name)} is not UTF-8 text.") from None


@dataclass
class Received:
    """One file streamed into staging."""

    name: str
    path: str
    size: int = 0
    head: bytes = b""


@dataclass
class Incoming:
    """One request's files, streamed into a staging folder of their own."""

    root: str
    max_bytes: int
    max_files: int
    files: list[Received] = field(default_factory=list)
    _fd: int = -1

    @classmethod
    def create(cls, upload_dir: str, max_bytes: int, max_files: int) -> Incoming:
        """A new empty staging folder under ``upload_dir``."""
        staging = Path(upload_dir) / STAGING
        staging.mkdir(mode=0o700, parents=True, exist_ok=True)
        root = staging / secrets.token_hex(12)
        root.mkdir(0o700)
        return cls(str(root), max_bytes, max_files)

    def begin(self, raw_name: str) -> None:
        """Start a file (its name is checked first: nothing is written for a bad one)."""
        if len(self.files) >= self.max_files:
            raise TooManyFiles(f"At most {self.max_files} files per upload.")
        name = safe_name(raw_name)
        path = str(Path(self.root) / str(len(self.files)))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        self._fd = os.open(path, flags, 0o600)
        self.files.append(Received(name, path))

    def write(self, data: bytes) -> None:
        """Append to the current file; UploadTooLarge past the limit (nothing more written)."""
        current = self.files[-1]
        if current.size + len(data) > self.max_bytes:
            raise UploadTooLarge(
                f"{_shown(current.name)} is larger than {self.max_bytes} bytes "
                "(ORCHESTRATOR_UPLOAD_MAX_BYTES)."
            )
        if len(current.head) < _SNIFF_BYTES:
            current.head += data[: _SNIFF_BYTES - len(current.head)]
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        current.size += len(data)

    def end(self) -> None:
        """Finish the current file."""
        if self._fd >= 0:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1

    def discard(self) -> None:
        """Remove the staging folder and everything in it."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        shutil.rmtree(self.root, ignore_errors=True)


class Uploads:
    """Checks, keeps and indexes uploaded files for their owner."""

    def __init__(
        self,
        corpus: CorpusClient,
        extractor: Extractor,
        documents: Documents,
        *,
        max_bytes: int,
        max_files: int,
        max_documents: int,
    ) -> None:
        self._corpus = corpus
        self._extractor = extractor
        self._documents = documents
        self.max_bytes = max_bytes
        self.max_files = max_files
        self._max_documents = max_documents

    def incoming(self) -> Incoming:
        """A staging area for one request's files."""
        if not self._documents.upload_dir:
            raise UploadsOff("Uploads are off on this server (ORCHESTRATOR_UPLOAD_DIR is empty).")
        return Incoming.create(self._documents.upload_dir, self.max_bytes, self.max_files)

    async def keep(self, who: Principal, incoming: Incoming) -> list[dict[str, Any]]:
        """Check every staged file, then move them into ``who``'s folder and index them.

        The caller holds the refresh turn and discards ``incoming`` afterwards, whatever
        happens (files already moved are no longer in it).
        """
        if not incoming.files:
            raise UploadRefused("The request holds no file (send multipart/form-data parts).")
        folder = self._documents.upload_folder(who)
        await self._check_quota(who, folder, incoming)
        extracted = [await self._extract(f) for f in incoming.files]
        await asyncio.to_thread(Path(folder).mkdir, 0o700, parents=True, exist_ok=True)
        docs = []
        for f, (markdown, title) in zip(incoming.files, extracted, strict=True):
            final = str(Path(folder) / f.name)
            # rename() replaces a file of that name (a new version) and never follows a link:
            # a symlink at ``final`` is itself replaced, its target untouched.
            await asyncio.to_thread(os.rename, f.path, final)
            _, digest = await asyncio.to_thread(sha256_file, final)
            st = await asyncio.to_thread(os.stat, final, follow_symlinks=False)
            kind = KINDS[Path(f.name).suffix.lower()][0]
            docs.append(
                LocalDoc(doc_id(final), title, markdown, digest, st.st_size, st.st_mtime_ns, kind)
            )
        try:
            await self._corpus.index(docs, [], timeout=CALL_TIMEOUT_S)
            stats = await self._corpus.commit(timeout=COMMIT_TIMEOUT_S)
        except CorpusError as err:
            # Not indexed: do not keep files nobody can see or remove.
            await asyncio.to_thread(_unlink_all, [d.id for d in docs])
            raise UploadsOff(f"The index service failed ({err.code}); nothing was kept.") from None
        logger.info("documents uploaded", extra={"owner": who.id, "files": len(docs)})
        return [
            {"id": d.id, "name": Path(d.id).name, "title": d.title, "type": d.kind,
             "size": d.size, "documents": stats.documents}
            for d in docs
        ]  # fmt: skip

    async def _check_quota(self, who: Principal, folder: str, incoming: Incoming) -> None:
        try:
            have = await self._corpus.list_documents(id_prefix(folder), timeout=CALL_TIMEOUT_S)
        except CorpusError as err:
            raise UploadsOff(f"The index service failed ({err.code}).") from None
        new = {doc_id(str(Path(folder) / f.name)) for f in incoming.files} - set(have)
        if len(have) + len(new) > self._max_documents:
            raise UploadQuota(
                f"{who.id!r} keeps {len(have)} uploaded documents; at most "
                f"{self._max_documents} (ORCHESTRATOR_UPLOAD_MAX_DOCUMENTS). Remove some first."
            )

    async def _extract(self, f: Received) -> tuple[str, str]:
        """The file's markdown and title from the reader, or NotExtractable."""
        sniff(f.name, f.head)
        if not f.size:
            raise NotExtractable(f"{_shown(f.name)} is empty.")
        content_type = KINDS[Path(f.name).suffix.lower()][1]
        data = await asyncio.to_thread(Path(f.path).read_bytes)
        try:
            reply = await self._extractor.extract(
                data, url=doc_id(f.name), content_type=content_type, timeout=EXTRACT_TIMEOUT_S
            )
        except CorpusError as err:
            raise UploadsOff(f"The reader could not extract the file ({err.code}).") from None
        if reply.status != "OK" or not reply.markdown.strip():
            why = {"TOO_LARGE": "it is larger than the reader extracts (READER_MAX_BYTES)",
                   "TIMEOUT": "extraction took too long (a PDF bomb?)",
                   "EMPTY": "it holds no text (a scanned PDF?)",
                   "UNSUPPORTED": "the reader does not take this content"}  # fmt: skip
            reason = why.get(reply.status, f"extraction failed ({reply.status})")
            raise NotExtractable(f"{_shown(f.name)} was not kept: {reason}.")
        return reply.markdown, title_of(reply.markdown, reply.title, f.name)
