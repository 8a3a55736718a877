"""The corpus: staged changes, an atomic commit, and queries against the last commit.

``stage`` records upserts and removals; ``documents`` shows the staged view (committed plus
staged) so an indexer can diff against it; ``commit`` merges the staged changes into a new
snapshot, persists it (when there is a data directory) and only then swaps it in. Queries
read whichever snapshot is current when they start, without a lock; commits are
serialised. Thread-safe: the servicer calls these from worker threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ranker.analyzer import Analyzer
from ranker.chunking import DEFAULT_CHUNK_WORDS
from ranker.corpus import index, storage
from ranker.corpus.analysis import Prepared, prepare
from ranker.corpus.index import Snapshot
from ranker.corpus.snippet import snippet
from ranker.corpus.types import CorpusStats, Document, DocumentInfo, Hit
from ranker.errors import CorpusStorageError, NotFoundError, StagingFullError

logger = logging.getLogger(__name__)

DEFAULT_TOP_K = 10
# Staged text waiting for a commit, in markdown bytes. A commit's peak memory is about 8x
# what it merges in (54 MB of markdown: ~410 MB RSS, bench/corpus); 64 MiB keeps a
# first-time indexing run inside the container's 768 MiB. The indexer commits and goes on.
MAX_STAGED_BYTES = 64 * 1024 * 1024


class Corpus:
    """Local documents and their BM25 index over chunks."""

    def __init__(
        self,
        analyzer: Analyzer,
        data_dir: Path | None = None,
        chunk_words: int = DEFAULT_CHUNK_WORDS,
        before_swap: Callable[[], None] | None = None,
        max_staged_bytes: int = MAX_STAGED_BYTES,
    ) -> None:
        """``data_dir`` None keeps the corpus in memory only; ``before_swap`` is called by
        a commit after persisting and before swapping (a seam for tests)."""
        self._analyzer = analyzer
        self._root = data_dir / "corpus" if data_dir is not None else None
        self._chunk_words = chunk_words
        self._before_swap = before_swap
        self._max_staged_bytes = max_staged_bytes
        self._snapshot = Snapshot()
        self._seq = 0
        # id -> staged upsert, or None for a staged removal of a committed document.
        self._staged: dict[str, Prepared | None] = {}
        # What the running commit took from _staged (empty when none runs).
        self._in_flight: dict[str, Prepared | None] = {}
        self._lock = threading.Lock()  # guards _staged and the snapshot swap
        self._commit_lock = threading.Lock()

    def load(self) -> None:
        """Load the persisted index, if any; a damaged one is logged and left unused."""
        if self._root is None:
            return
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            self._seq = max(storage.generations(self._root), default=0)
            loaded = storage.load(self._root)
        # A damaged index must never stop the service: the indexer rebuilds it.
        except Exception as err:  # noqa: BLE001
            logger.warning(
                "corpus index unusable, starting empty",
                extra={"path": str(self._root), "reason": str(err)[:300]},
            )
            return
        if loaded is None:
            logger.info("no corpus index yet", extra={"path": str(self._root)})
            return
        self._snapshot, _ = loaded
        logger.info(
            "corpus index loaded",
            extra={
                "path": str(self._root),
                "documents": len(self._snapshot.infos),
                "chunks": self._snapshot.n_chunks,
                "terms": len(self._snapshot.vocab),
                "committed_at": self._snapshot.committed_at,
            },
        )

    def prepare(self, documents: Iterable[Document]) -> list[Prepared]:
        """Chunk and analyse documents (CPU-heavy; no lock held)."""
        return [prepare(self._analyzer, d, self._chunk_words) for d in documents]

    def _in_view(self, doc_id: str) -> bool:
        if doc_id in self._staged:
            return self._staged[doc_id] is not None
        return doc_id in self._snapshot.positions

    def stage(self, upserts: Sequence[Prepared], remove_ids: Sequence[str]) -> tuple[int, int, int]:
        """Stage removals, then upserts; return (upserted, removed, pending). Removing an
        id the staged view does not have is ignored (not counted). StagingFullError (and
        nothing staged) when the upserts would take staged text past the bound."""
        removed = 0
        with self._lock:
            staged = sum(len(p.markdown) for p in self._staged.values() if p is not None)
            if upserts and staged + sum(len(p.markdown) for p in upserts) > self._max_staged_bytes:
                raise StagingFullError(
                    f"more than {self._max_staged_bytes >> 20} MiB of staged text: call "
                    "CommitCorpus, then send the rest"
                )
            for doc_id in remove_ids:
                if not self._in_view(doc_id):
                    continue
                removed += 1
                if doc_id in self._snapshot.positions or self._in_flight.get(doc_id):
                    self._staged[doc_id] = None  # committed, or about to be
                else:
                    del self._staged[doc_id]  # only ever staged: forget it
            for p in upserts:
                self._staged[p.info.id] = p
            pending = len(self._staged)
        logger.info(
            "corpus changes staged",
            extra={"upserted": len(upserts), "removed": removed, "pending": pending},
        )
        return len(upserts), removed, pending

    def documents(self, id_prefix: str = "") -> list[DocumentInfo]:
        """The staged view (committed documents with staged changes applied), by id."""
        with self._lock:
            snap, staged = self._snapshot, dict(self._staged)
        out = [i for i in snap.infos if i.id.startswith(id_prefix) and i.id not in staged]
        out += [p.info for k, p in staged.items() if p is not None and k.startswith(id_prefix)]
        return sorted(out, key=lambda i: i.id)

    def stats(self) -> CorpusStats:
        """Sizes of the searchable index and the staged change count."""
        snap = self._snapshot
        return CorpusStats(len(snap.infos), snap.n_chunks, len(self._staged), snap.committed_at)

    def commit(self) -> CorpusStats:
        """Make the staged changes searchable (CPU- and I/O-heavy: call from a thread).

        Raises CorpusStorageError when the new index cannot be written; the previous one
        then stays current and the changes stay staged.
        """
        with self._commit_lock:
            with self._lock:
                taken = self._in_flight = dict(self._staged)
                old = self._snapshot
            if not taken:
                return self.stats()
            start = time.perf_counter()
            added = [p for p in taken.values() if p is not None]
            try:
                new = self._build(old, taken, added)
                with self._lock:
                    self._snapshot = new
                    for doc_id, p in taken.items():
                        # A change staged again during the build stays pending.
                        if doc_id in self._staged and self._staged[doc_id] is p:
                            del self._staged[doc_id]
            finally:
                with self._lock:
                    self._in_flight = {}
            stats = self.stats()
        logger.info(
            "corpus committed",
            extra={
                "documents": stats.documents,
                "chunks": stats.chunks,
                "upserted": len(added),
                "removed": len(taken) - len(added),
                "pending": stats.pending,
                "build_ms": round((time.perf_counter() - start) * 1000, 1),
            },
        )
        return stats

    def _build(
        self, old: Snapshot, taken: dict[str, Prepared | None], added: list[Prepared]
    ) -> Snapshot:
        """The next snapshot, persisted (when there is a data directory), not yet current."""
        merged = index.merge(old, set(taken) & old.positions.keys(), added)
        committed_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        new = self._persist(merged, committed_at)
        if self._before_swap is not None:
            self._before_swap()
        return new

    def _persist(self, merged: index.Merged, committed_at: str) -> Snapshot:
        if self._root is None:
            return index.in_memory(merged, committed_at)
        try:
            # Past every generation on disk: a failed commit may have left one behind.
            self._seq = max([self._seq, *storage.generations(self._root)]) + 1
            return storage.write(self._root, self._seq, merged, committed_at)
        except OSError as err:
            logger.exception("could not write the corpus index")
            raise CorpusStorageError("could not write the corpus index") from err

    def search(self, query: str, top_k: int = DEFAULT_TOP_K) -> tuple[list[Hit], int]:
        """Documents ranked by their best chunk's BM25 (ties: by id), each with a snippet of
        that chunk; and how many documents the searchable index holds."""
        snap = self._snapshot
        terms = self._analyzer.query_terms(query)
        ids = [t for t in (snap.term_ids.get(term) for term in terms) if t is not None]
        if not ids or top_k <= 0:
            return [], len(snap.infos)
        scores = snap.scores(ids)
        best = snap.best_per_document(scores)
        docs = np.flatnonzero(best > 0)
        if len(docs) > top_k:  # keep documents tied with the k-th in: ties go by id
            kth = np.partition(best[docs], len(docs) - top_k)[len(docs) - top_k]
            docs = docs[best[docs] >= kth]
        ranked = sorted(docs.tolist(), key=lambda d: (-best[d], snap.infos[d].id))[:top_k]
        hits = []
        for rank, d in enumerate(ranked, 1):
            info, chunk = snap.infos[d], snap.best_chunk(d, scores)
            text = snippet(self._analyzer, snap.chunk_text.get(chunk), terms)
            hits.append(Hit(info.id, info.title, text, float(best[d]), rank))
        return hits, len(snap.infos)

    def get(self, doc_id: str) -> Document:
        """The committed document ``doc_id``; NotFoundError when it is not searchable."""
        snap = self._snapshot
        i = snap.positions.get(doc_id)
        if i is None:
            raise NotFoundError(f"no committed document {doc_id[:200]!r}")
        info = snap.infos[i]
        return Document(
            id=info.id,
            title=info.title,
            markdown=snap.markdown.get(i),
            content_hash=info.content_hash,
            size=info.size,
            mtime_ns=info.mtime_ns,
            kind=info.kind,
        )
