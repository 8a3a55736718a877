"""One incremental refresh of a documents folder: walk, diff, extract what changed, stage, commit.

Changes become searchable at the ``CommitCorpus`` at the end of the run, or earlier when a large
run fills the index's staging area (what is staged is committed then, upserts only, and the run
goes on). A run that stops early (the folder vanished, the index or reader went away) drops what
it staged since its last commit and sends no removals, so no file is removed by mistake.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_incrementing

from orchestrator.adapters.corpus.scan import FileEntry, batches, id_prefix, plan, sha256_file, walk
from orchestrator.adapters.grpc.corpus import (
    CorpusClient,
    CorpusStats,
    Extracted,
    Extractor,
    LocalDoc,
)
from orchestrator.core.ask.domain import CorpusError

logger = logging.getLogger(__name__)

#: The index accepts at most this many documents per IndexDocuments call.
MAX_BATCH_DOCS = 512
# Characters of markdown per IndexDocuments call: even at 4 UTF-8 bytes a character this keeps
# a message well under the gRPC message cap (64 MiB on both ends).
MAX_BATCH_CHARS = 8 * 1024 * 1024
CALL_TIMEOUT_S = 60.0
# Building the index of a large folder takes a while (embedding every new passage once: about
# 50 ms each on an idle core, over 1 s on the loaded 2-core box); queries are served meanwhile.
COMMIT_TIMEOUT_S = 3600.0
EXTRACT_ATTEMPTS = 3
LOG_EVERY = 100
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)

Progress = Callable[["Counts"], None]


class FolderMissing(Exception):
    """The folder to index does not exist (or is not a directory)."""


class RefreshAborted(Exception):
    """The run cannot go on; what it staged since its last commit is dropped."""


@dataclass
class Counts:
    """Progress and outcome counters (files)."""

    total: int = 0
    done: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters as JSON."""
        return asdict(self)


@dataclass
class RefreshResult:
    """What one refresh did."""

    root: str
    status: Literal["ok", "aborted"] = "ok"
    error: str = ""
    counts: Counts = field(default_factory=Counts)
    stats: CorpusStats | None = None
    duration_ms: float = 0.0
    finished_at: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON."""
        return {
            "root": self.root,
            "status": self.status,
            "error": self.error or None,
            **self.counts.as_dict(),
            "duration_ms": self.duration_ms,
        }


async def _is_dir(path: str) -> bool:
    return await asyncio.to_thread(Path(path).is_dir)


def title_of(markdown: str, extracted_title: str, path: str) -> str:
    """The extractor's title, else the first markdown heading, else the file name."""
    if extracted_title.strip():
        return extracted_title.strip()
    match = _HEADING.search(markdown[:20_000])
    return match.group(1).strip() if match else Path(path).name


@dataclass
class _Run:
    root: str
    counts: Counts
    on_progress: Progress
    known: dict[str, Any]
    buffer: list[LocalDoc] = field(default_factory=list)
    staged: int = 0
    flush_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def tick(self) -> None:
        self.counts.done += 1
        self.on_progress(self.counts)
        if self.counts.done % LOG_EVERY == 0:
            logger.info("indexing", extra={"root": self.root, **self.counts.as_dict()})


class Indexer:
    """Refreshes folders into the index; reads and extracts ``concurrency`` at once."""

    def __init__(
        self,
        corpus: CorpusClient,
        extractor: Extractor,
        *,
        max_file_bytes: int,
        concurrency: int,
        retry_delay_s: float = 0.5,
    ) -> None:
        self._corpus = corpus
        self._extractor = extractor
        self._max_file_bytes = max_file_bytes
        self._concurrency = concurrency
        self._retry_delay_s = retry_delay_s

    async def refresh(self, root: str, on_progress: Progress | None = None) -> RefreshResult:
        """Bring the corpus's documents under ``root`` in line with the folder.

        Raises:
            FolderMissing: ``root`` is not a directory (checked before anything else).
            CorpusError: the index failed before anything was staged (retry later).
        """
        start = time.monotonic()
        if not await _is_dir(root):
            raise FolderMissing(f"{root} is not a directory")
        result = RefreshResult(root)
        known = await self._corpus.list_documents(id_prefix(root), timeout=CALL_TIMEOUT_S)
        run = _Run(root, result.counts, on_progress or (lambda _c: None), dict(known))
        try:
            result.stats = await self._apply(run)
        except* (RefreshAborted, CorpusError) as group:
            # except*: a worker's failure arrives wrapped by the workers' TaskGroup.
            result.status, result.error = "aborted", str(group.exceptions[0])
            # What a large first run committed before it stopped (staging full) stays in the
            # index; only what was staged since is dropped.
            logger.warning(
                "indexing stopped; changes staged since the last commit are dropped",
                extra={"root": root},
            )
        result.duration_ms = round((time.monotonic() - start) * 1000, 1)
        result.finished_at = time.time()
        logger.info(
            "indexing finished",
            extra={"root": root, "status": result.status, **result.counts.as_dict()},
        )
        return result

    async def _apply(self, run: _Run) -> CorpusStats | None:
        found = await asyncio.to_thread(walk, run.root, max_bytes=self._max_file_bytes)
        if not await _is_dir(run.root):
            raise RefreshAborted(f"{run.root} disappeared while it was being listed")
        todo = plan(found, run.known)
        counts = run.counts
        counts.total = len(found.files)
        counts.skipped = found.unsupported + found.too_large
        counts.unchanged = counts.done = len(todo.unchanged)
        run.on_progress(counts)
        logger.info(
            "indexing started",
            extra={"root": run.root, "files": counts.total, "to_check": len(todo.check)},
        )
        queue = list(reversed(todo.check))
        async with asyncio.TaskGroup() as tg:
            for _ in range(min(self._concurrency, len(queue))):
                tg.create_task(self._worker(run, queue))
        await self._flush(run, force=True)
        # A folder that vanished mid-run looks empty: never turn that into removals.
        if not await _is_dir(run.root):
            raise RefreshAborted(f"{run.root} disappeared while it was being indexed")
        for part in batches((1 for _ in todo.remove), max_items=MAX_BATCH_DOCS, max_bytes=1 << 40):
            ids = todo.remove[part.start : part.stop]
            await self._corpus.index([], ids, timeout=CALL_TIMEOUT_S)
            counts.removed += len(ids)
        run.on_progress(counts)
        if not (run.staged or todo.remove):
            # Nothing new from this run, but an earlier run that stopped half-way may have left
            # staged changes behind: an empty IndexDocuments reports them without changing any.
            pending = await self._corpus.index([], [], timeout=CALL_TIMEOUT_S)
            if not pending:
                return None
        return await self._corpus.commit(timeout=COMMIT_TIMEOUT_S)

    async def _worker(self, run: _Run, queue: list[FileEntry]) -> None:
        while queue:
            entry = queue.pop()
            doc = await self._prepare(run, entry)
            if doc is not None:
                run.buffer.append(doc)
                await self._flush(run)
            run.tick()

    async def _prepare(self, run: _Run, entry: FileEntry) -> LocalDoc | None:
        """The document to upsert for ``entry``, or None (unchanged, or failed: counted)."""
        try:
            data, digest = await asyncio.to_thread(sha256_file, entry.path)
        except OSError as err:
            self._fail(run, entry, f"cannot read: {err.strerror or err}")
            return None
        info = run.known.get(entry.id)
        if info is not None and info.content_hash == digest:
            # Same bytes, new mtime: re-stage the stored text with the new size and mtime so the
            # next refresh skips hashing it; no extraction.
            stored = await self._corpus.get(entry.id, timeout=CALL_TIMEOUT_S)
            # GetDocument reads the committed view: a version staged but never committed (a
            # stopped run) has other text, so only a committed copy of these bytes is reused.
            if stored is not None and stored.content_hash == digest:
                run.counts.unchanged += 1
                return LocalDoc(
                    stored.id, stored.title, stored.markdown, digest, len(data),
                    entry.mtime_ns, stored.kind,
                )  # fmt: skip
        if not data.strip():
            self._fail(run, entry, "empty file")
            return None
        extracted = await self._extract(entry, data)
        if isinstance(extracted, str):
            self._fail(run, entry, extracted)
            return None
        markdown, title = extracted
        if info is None:
            run.counts.added += 1
        else:
            run.counts.updated += 1
        return LocalDoc(entry.id, title, markdown, digest, len(data), entry.mtime_ns, entry.kind)

    async def _extract(self, entry: FileEntry, data: bytes) -> tuple[str, str] | str:
        """(markdown, title), or why the file cannot be indexed."""
        # A reader that is restarting answers UNAVAILABLE for a moment: retried with a growing
        # pause; a refusal (a bad file) is final at once.
        retrying = AsyncRetrying(
            stop=stop_after_attempt(EXTRACT_ATTEMPTS),
            wait=wait_incrementing(start=self._retry_delay_s, increment=self._retry_delay_s),
            retry=retry_if_exception(lambda e: isinstance(e, CorpusError) and e.retryable),
            reraise=True,
        )
        try:
            reply: Extracted = await retrying(
                self._extractor.extract,
                data,
                url=entry.id,
                content_type=entry.content_type,
                timeout=CALL_TIMEOUT_S,
            )
        except CorpusError as err:
            if not err.retryable:
                return f"extraction refused ({err.code})"
            raise RefreshAborted(f"the reader is unavailable ({err.code})") from None
        if reply.status != "OK" or not reply.markdown.strip():
            return f"extraction failed ({reply.status} {reply.error})".strip()
        return reply.markdown, title_of(reply.markdown, reply.title, entry.path)

    def _fail(self, run: _Run, entry: FileEntry, why: str) -> None:
        logger.warning("skipped a file", extra={"path": entry.path, "error": why})
        run.counts.failed += 1

    async def _flush(self, run: _Run, *, force: bool = False) -> None:
        async with run.flush_lock:
            size = sum(len(d.markdown) for d in run.buffer)
            if not run.buffer or not (
                force or len(run.buffer) >= MAX_BATCH_DOCS or size >= MAX_BATCH_CHARS
            ):
                return
            docs, run.buffer = run.buffer, []
            for part in batches(
                (len(d.markdown) for d in docs), max_items=MAX_BATCH_DOCS, max_bytes=MAX_BATCH_CHARS
            ):
                await self._stage(docs[part.start : part.stop])
                run.staged += len(part)

    async def _stage(self, docs: list[LocalDoc]) -> None:
        try:
            await self._corpus.index(docs, [], timeout=CALL_TIMEOUT_S)
        except CorpusError as err:
            if err.code != "RESOURCE_EXHAUSTED":
                raise
            # The index bounds staged text (a large first run): make what is staged searchable
            # (upserts only; removals still wait for the end of the run), then send the rest.
            logger.info("staging is full; committing what is staged", extra={"docs": len(docs)})
            await self._corpus.commit(timeout=COMMIT_TIMEOUT_S)
            await self._corpus.index(docs, [], timeout=CALL_TIMEOUT_S)
