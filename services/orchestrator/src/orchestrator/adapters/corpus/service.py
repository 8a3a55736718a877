"""The corpus as the app sees it: one refresh at a time, the background refresh of CORPUS_DIR,
the path policy of the refresh endpoint, and the stats ``GET /v1/corpus`` shows."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    retry_if_result,
    wait_chain,
    wait_fixed,
)

from orchestrator.adapters.corpus.documents import Documents
from orchestrator.adapters.corpus.indexer import (
    FolderMissing,
    Indexer,
    Progress,
    RefreshResult,
)
from orchestrator.adapters.corpus.uploads import Uploads
from orchestrator.adapters.grpc.corpus import CorpusClient
from orchestrator.core.ask.domain import CorpusError
from orchestrator.core.errors import DomainError, ErrorKind

logger = logging.getLogger(__name__)

# Waits between attempts while the index is not answering yet (it may start after us).
STARTUP_BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


def _all_failed(result: RefreshResult) -> bool:
    return result.counts.total > 0 and result.counts.failed == result.counts.total


# GET /v1/corpus must answer promptly even when the index hangs.
STATS_TIMEOUT_S = 10.0


def _shown(path: str) -> str:
    """The client's own path, quoted and cut for a message."""
    return repr(path if len(path) <= 200 else path[:199] + "…")


class MalformedPath(DomainError):
    """A path no filesystem call can take (a NUL byte)."""

    kind = ErrorKind.MALFORMED
    title = "Invalid path"


class BadPath(DomainError):
    """No folder to index, or a relative path."""

    kind = ErrorKind.INVALID
    title = "Invalid path"


class PathForbidden(DomainError):
    """The path is outside the corpus roots and the request may not index it."""

    kind = ErrorKind.FORBIDDEN
    title = "Path not allowed"
    #: Machine-readable reason, so a client can ask its user and retry with allow_outside.
    code = "outside_roots"


class PathNotFound(DomainError):
    """The folder to index does not exist."""

    kind = ErrorKind.NOT_FOUND
    title = "Folder not found"


class CorpusUnavailable(DomainError):
    """The index service (which holds the corpus) cannot be reached."""

    kind = ErrorKind.UNAVAILABLE
    title = "Corpus unavailable"


def _unavailable(err: CorpusError) -> CorpusUnavailable:
    # The index's own message (its addresses, its files) goes to the log, not to the caller.
    logger.warning("the index service failed", extra={"code": err.code, "error": str(err)})
    return CorpusUnavailable(f"The index service failed ({err.code}); the server log has more.")


class CorpusService:
    """Serialises refreshes and remembers how the last one went."""

    def __init__(
        self,
        corpus: CorpusClient,
        indexer: Indexer,
        *,
        corpus_dir: str,
        allow_any_path: bool,
        rescan_s: float,
        roots: tuple[str, ...] = (),
        allow_outside: bool = False,
        upload_dir: str = "",
    ) -> None:
        self._corpus = corpus
        self._indexer = indexer
        self.corpus_dir = corpus_dir
        # CORPUS_DIR first, then ORCHESTRATOR_CORPUS_ROOTS: the folders any refresh may index.
        self.roots = tuple(dict.fromkeys(([corpus_dir] if corpus_dir else []) + list(roots)))
        self._allow_any_path = allow_any_path
        self._allow_outside = allow_outside
        self._rescan_s = rescan_s
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[RefreshResult]] = set()
        self.last: RefreshResult | None = None
        self.documents = Documents(corpus, roots=self.roots, upload_dir=upload_dir)
        # Set by the wiring when ORCHESTRATOR_UPLOAD_DIR is (it needs the reader).
        self.uploads: Uploads | None = None

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the refresh turn (an upload's commit must not publish half a refresh)."""
        async with self._lock:
            yield

    @property
    def busy(self) -> bool:
        """True while a refresh runs."""
        return self._lock.locked()

    def resolve(self, path: str | None, *, allow_outside: bool = False) -> str:
        """The canonical folder a refresh request may index (CORPUS_DIR when ``path`` is empty).

        Canonical means symlinks resolved and ``//`` or ``/./`` folded (``os.path.realpath``):
        one folder has one name, so its documents get one id each, never a second copy.
        ``allow_outside`` is the client's word that its user agreed to index a folder outside
        the roots; the server honours it only with ORCHESTRATOR_CORPUS_ALLOW_OUTSIDE.

        Raises:
            MalformedPath: a NUL byte in the path (400).
            BadPath: no path and no CORPUS_DIR, or a relative path (422).
            PathForbidden: outside the roots and not allowed (403).
            PathNotFound: not a directory (404).
        """
        if path and "\x00" in path:
            raise MalformedPath("The path contains a NUL byte.")
        # Messages name the folder as the client wrote it, never as resolved: the real path
        # would tell a symlink's target or (for /proc/self/cwd) the server's working directory.
        asked = _shown(path) if path else "CORPUS_DIR"
        if not path:
            if not self.corpus_dir:
                raise BadPath("No path given and CORPUS_DIR is not set.")
            path = self.corpus_dir
        if not Path(path).is_absolute():
            raise BadPath(f"The path must be absolute, got {asked}.")
        # Compared after resolving symlinks: a link inside CORPUS_DIR must not open /etc.
        folder = os.path.realpath(path)
        if not (self._inside_roots(folder) or self._allow_any_path):
            if not (allow_outside and self._allow_outside):
                logger.info("refresh refused: outside the corpus roots", extra={"root": folder})
                raise PathForbidden(self._forbidden(asked, allow_outside))
            logger.warning("indexing a folder outside the corpus roots", extra={"root": folder})
        if not Path(folder).is_dir():
            raise PathNotFound(f"{asked} is not a directory on the server.")
        return folder

    def _inside_roots(self, real: str) -> bool:
        for root in self.roots:
            real_root = os.path.realpath(root)
            if real == real_root or real.startswith(real_root.rstrip("/") + "/"):
                return True
        return False

    def _forbidden(self, folder: str, asked: bool) -> str:
        where = (
            "the corpus roots (GET /v1/corpus lists them)"
            if self.roots
            else ("the corpus roots (none: CORPUS_DIR is not set)")
        )
        if asked:
            return (
                f"{folder} is outside {where} and this server indexes only those "
                "(ORCHESTRATOR_CORPUS_ALLOW_OUTSIDE is off); add the folder to "
                "ORCHESTRATOR_CORPUS_ROOTS."
            )
        return (
            f"{folder} is outside {where}; confirm with allow_outside "
            "(quarry index --allow-outside) or add it to ORCHESTRATOR_CORPUS_ROOTS."
        )

    async def refresh(self, folder: str, on_progress: Progress | None = None) -> RefreshResult:
        """Refresh ``folder``, waiting for a refresh already running to finish first.

        Raises:
            PathNotFound: the folder vanished before the run started.
            CorpusUnavailable: the index did not answer.
        """
        async with self._lock:
            try:
                result = await self._indexer.refresh(folder, on_progress)
            except FolderMissing:
                raise PathNotFound("The folder is no longer a directory on the server.") from None
            except CorpusError as err:
                raise _unavailable(err) from None
            self.last = result
            return result

    def start_refresh(
        self, folder: str, on_progress: Progress | None = None
    ) -> asyncio.Task[RefreshResult]:
        """Refresh ``folder`` in a task of its own: it finishes even if the caller goes away."""
        task = asyncio.create_task(self.refresh(folder, on_progress))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        """Cancel refreshes still running (at shutdown); nothing half-done is committed."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks))

    async def stats(self) -> dict[str, Any]:
        """Documents and chunks (staged view), the last commit and the last refresh."""
        try:
            docs = await self._corpus.list_documents("", timeout=STATS_TIMEOUT_S)
        except CorpusError as err:
            raise _unavailable(err) from None
        last = self.last
        committed = last.stats if last is not None else None
        return {
            "corpus_dir": self.corpus_dir or None,
            "roots": list(self.roots),
            "documents": len(docs),
            "chunks": sum(d.chunks for d in docs.values()),
            "embedded": committed.embedded if committed else None,
            "pending": committed.pending if committed else None,
            "committed_at": committed.committed_at if committed else None,
            "refreshing": self.busy,
            "last_refresh": last.as_dict() if last is not None else None,
        }

    async def run_background(self) -> None:
        """Refresh CORPUS_DIR now (retrying while the index starts), then every rescan period.

        Runs until cancelled (at shutdown); never raises otherwise.
        """
        while True:
            result = await self._refresh_until_up()
            if result is not None and result.status != "ok" and not self._rescan_s:
                # Aborted with no rescan configured: try again later rather than never.
                await asyncio.sleep(STARTUP_BACKOFF_S[-1])
                continue
            if not self._rescan_s:
                return
            await asyncio.sleep(self._rescan_s)

    async def _refresh_until_up(self) -> RefreshResult | None:
        """One background refresh, tried again on STARTUP_BACKOFF_S (tenacity): for as long as
        the index does not answer or the folder is missing, and through the table once when
        every file failed (the reader, which extracts, most likely still starting beside us
        under `make run`; an empty corpus until the next rescan would answer every question
        with "no results"). None when the refresh crashed."""
        retrying = AsyncRetrying(
            wait=wait_chain(*(wait_fixed(s) for s in STARTUP_BACKOFF_S)),
            retry=retry_if_exception_type((CorpusUnavailable, PathNotFound))
            | retry_if_result(lambda r: r is not None and _all_failed(r)),
            # Unreachable index: never give up. Every file failed: once through the table.
            stop=lambda state: (
                state.outcome is not None
                and not state.outcome.failed
                and state.attempt_number > len(STARTUP_BACKOFF_S)
            ),
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
            before_sleep=self._log_retry,
        )
        result: RefreshResult | None = await retrying(self._background_refresh)
        return result

    async def _background_refresh(self) -> RefreshResult | None:
        try:
            return await self.refresh(await asyncio.to_thread(os.path.realpath, self.corpus_dir))
        except (CorpusUnavailable, PathNotFound):
            raise
        except Exception:  # a bug must not kill the app's background task silently
            logger.exception("corpus refresh crashed", extra={"root": self.corpus_dir})
            return None

    def _log_retry(self, state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else None
        if isinstance(err, DomainError):
            logger.warning(
                "corpus refresh failed; retrying",
                extra={"root": self.corpus_dir, "error": err.detail, "retry_in_s": wait},
            )
        else:
            logger.info(
                "every file failed to index; retrying",
                extra={"root": self.corpus_dir, "retry_in_s": wait},
            )
