"""The documents a person can see, remove and pin a question to.

Who sees what: with no tokens (one person) or as an admin, every indexed document. A named user
(tokens that name users) sees the shared folders (CORPUS_DIR and ORCHESTRATOR_CORPUS_ROOTS) and
their own uploads, never another user's: the same allow-list narrows the passages of their
questions (the index's ``id_prefixes``), so an upload is private to whoever sent it.

A scope (``options.scope``) pins a question to a folder or a file: an absolute path or a
``local:`` id. It must name something the caller can see that holds at least one document;
anything else is refused before the run starts (422), so a typo never silently searches nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.adapters.corpus.scan import id_prefix
from orchestrator.adapters.grpc.corpus import LOCAL_PREFIX, CorpusClient, DocInfo
from orchestrator.core.ask.domain import CorpusError
from orchestrator.core.ask.state import RunOptions
from orchestrator.core.errors import DomainError, ErrorKind
from orchestrator.core.principals import NAME_RE, Principal

logger = logging.getLogger(__name__)

CALL_TIMEOUT_S = 10.0
COMMIT_TIMEOUT_S = 600.0
MAX_SCOPE_CHARS = 4096


class DocumentNotFound(DomainError):
    """No document with that id (or one the caller may not see: the same answer)."""

    kind = ErrorKind.NOT_FOUND
    title = "Document not found"


class InvalidScope(DomainError):
    """``options.scope`` names no folder or file the caller can ask about."""

    kind = ErrorKind.INVALID
    title = "Invalid scope"
    code = "invalid_scope"


class DocumentsUnavailable(DomainError):
    """The index (which holds the documents) did not answer."""

    kind = ErrorKind.UNAVAILABLE
    title = "Documents unavailable"


def _unavailable(err: CorpusError) -> DocumentsUnavailable:
    logger.warning("the index service failed", extra={"code": err.code, "error": str(err)})
    return DocumentsUnavailable(f"The index service failed ({err.code}); the server log has more.")


def owner_folder(principal_id: str) -> str:
    """The folder name of a principal's uploads: its name, or a safe form of an unnamed
    token's id (``token:ab12…`` → ``token-ab12…``)."""
    if NAME_RE.match(principal_id):
        return principal_id
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in principal_id)[:80] or "user"


def _iso_ns(ns: int) -> str | None:
    if ns <= 0:
        return None
    stamp = datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="seconds")
    return stamp.replace("+00:00", "Z")


@dataclass(frozen=True)
class DocumentView:
    """One document as the API lists it."""

    info: DocInfo
    uploaded: bool

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``GET /v1/corpus/documents``'s items."""
        i = self.info
        return {
            "id": i.id,
            "path": i.id.removeprefix(LOCAL_PREFIX),
            "title": i.title,
            "type": i.kind,
            "size": i.size,
            "passages": i.chunks,
            "pages": i.pages or None,
            "indexed_at": i.indexed_at or None,
            "modified_at": _iso_ns(i.mtime_ns),
            "uploaded": self.uploaded,
        }


class Documents:
    """Listing, removal and scopes over the index, for one server's roots and uploads."""

    def __init__(
        self, corpus: CorpusClient, *, roots: tuple[str, ...], upload_dir: str = ""
    ) -> None:
        self._corpus = corpus
        self._roots = roots
        self.upload_dir = upload_dir

    def upload_folder(self, who: Principal) -> str:
        """Where ``who``'s uploads are kept (under the upload folder)."""
        return str(Path(self.upload_dir) / owner_folder(who.id))

    def visible(self, who: Principal) -> tuple[str, ...]:
        """The id prefixes ``who`` may see; empty means everything (admins, one person)."""
        if who.admin:
            return ()
        shared = [id_prefix(os.path.realpath(r)) for r in self._roots]
        own = [id_prefix(self.upload_folder(who))] if self.upload_dir else []
        # Never empty for a user: a prefix no id has keeps "nothing" from meaning "everything".
        return tuple(shared + own) or (LOCAL_PREFIX + "\x00",)

    def _sees(self, who: Principal, doc_id: str) -> bool:
        prefixes = self.visible(who)
        return not prefixes or doc_id.startswith(prefixes)

    def is_upload(self, doc_id: str) -> bool:
        """True for a document kept in the upload folder (removing it deletes the file)."""
        return bool(self.upload_dir) and doc_id.startswith(id_prefix(self.upload_dir))

    async def _all(self, prefix: str = "") -> dict[str, DocInfo]:
        try:
            return await self._corpus.list_documents(prefix, timeout=CALL_TIMEOUT_S)
        except CorpusError as err:
            raise _unavailable(err) from None

    async def page(
        self, who: Principal, *, under: str, offset: int, limit: int
    ) -> tuple[list[dict[str, Any]], int]:
        """``who``'s documents (under the scope ``under`` when given), by path; and the total."""
        prefix = (await self.scope(who, under)) if under else ""
        docs = [d for d in (await self._all(prefix)).values() if self._sees(who, d.id)]
        docs.sort(key=lambda d: d.id)
        views = [DocumentView(d, self.is_upload(d.id)).as_dict() for d in docs]
        return views[offset : offset + limit], len(views)

    async def get(self, who: Principal, doc_id: str) -> DocInfo:
        """The document ``doc_id``, if ``who`` may see it."""
        found = (await self._all(doc_id)).get(doc_id) if doc_id.startswith(LOCAL_PREFIX) else None
        if found is None or not self._sees(who, doc_id):
            raise DocumentNotFound(f"No document {doc_id[:200]!r}.")
        return found

    async def remove(self, who: Principal, doc_id: str) -> dict[str, Any]:
        """Forget ``doc_id`` (staged and committed at once); an upload's file is deleted too.

        A document of a watched folder comes back at that folder's next refresh unless its
        file is gone: Quarry never deletes files outside the upload folder.
        """
        info = await self.get(who, doc_id)
        uploaded = self.is_upload(doc_id)
        if uploaded:
            path = doc_id.removeprefix(LOCAL_PREFIX)
            # The id is the index's, built from a path under the upload folder; unlink does not
            # follow a final symlink, so nothing outside the folder can be removed.
            await asyncio.to_thread(Path(path).unlink, missing_ok=True)
        try:
            await self._corpus.index([], [doc_id], timeout=CALL_TIMEOUT_S)
            stats = await self._corpus.commit(timeout=COMMIT_TIMEOUT_S)
        except CorpusError as err:
            raise _unavailable(err) from None
        logger.info("document removed", extra={"doc": doc_id[:300], "uploaded": uploaded})
        return {
            "removed": DocumentView(info, uploaded).as_dict(),
            "documents": stats.documents,
            "file_deleted": uploaded,
        }

    async def scope(self, who: Principal, scope: str) -> str:
        """The index id prefix ``scope`` (an absolute path or a ``local:`` id) stands for.

        A file's own id; a folder's id followed by ``/``.

        Raises:
            InvalidScope: not absolute, malformed, or naming nothing ``who`` can see.
        """
        path = scope.removeprefix(LOCAL_PREFIX).strip()
        if not path or "\x00" in path or len(path) > MAX_SCOPE_CHARS:
            raise InvalidScope("scope must be an absolute folder or file path (or a local: id).")
        if not path.startswith("/"):
            raise InvalidScope(f"scope must be an absolute path, got {scope[:200]!r}.")
        path = "/" + posixpath.normpath(path).lstrip("/")
        exact = LOCAL_PREFIX + path
        folder = id_prefix(path)
        found = await self._all(exact)
        visible = [i for i in found if self._sees(who, i)]
        if exact in visible:
            return exact
        if any(i.startswith(folder) for i in visible):
            return folder
        raise InvalidScope(
            f"scope {scope[:200]!r} names no indexed folder or file "
            "(GET /v1/corpus/documents lists them)."
        )


async def pinned(
    options: RunOptions,
    docs: Documents | None,
    who: Principal,
    scope: str | None,
    asked: Sequence[str] | None = None,
) -> RunOptions:
    """``options`` narrowed to what ``who`` may see and, with ``scope``, pinned to that folder
    or file: only its passages are used, so the question searches the local documents alone.

    Raises:
        InvalidScope: a scope with no local documents here, beside an explicit ``web`` source
            (``asked``: the request's own sources), or naming nothing ``who`` can see.
    """
    visible = docs.visible(who) if docs is not None else ()
    if not scope:
        return replace(options, visible=visible) if visible else options
    if docs is None:
        raise InvalidScope("scope needs local documents, and this server has none.")
    if asked and "web" in asked:
        raise InvalidScope("scope pins the question to local documents; drop 'web' from sources.")
    prefix = await docs.scope(who, scope)
    return replace(options, scope=prefix, visible=visible, sources=("local",))
