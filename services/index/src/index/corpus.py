"""The corpus: staged changes, an atomic commit, and queries against the last commit.

``stage`` records upserts and removals; ``documents`` shows the staged view (committed plus
staged) so an indexer can diff against it; ``commit`` merges the staged changes into a new
snapshot, embeds the new passages (once: kept passages keep their stored vectors), persists
it (when there is a data directory) and only then swaps it in. Queries
read whichever snapshot is current when they start, without a lock; commits are
serialised. Thread-safe: the servicer calls these from worker threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from quarry_text.analyzer import Analyzer

from index import snapshot as index
from index import storage, textsettings
from index.analysis import Prepared, prepare
from index.dense import Embedder, embed_all
from index.errors import CorpusStorageError, IndexOutdatedError, NotFoundError, StagingFullError
from index.passages import PassageParams, search_passages
from index.snapshot import Snapshot, no_vectors
from index.snippet import snippet
from index.types import CorpusStats, Document, DocumentInfo, Hit, PassageHit

logger = logging.getLogger(__name__)

DEFAULT_TOP_K = 10
# Passage size in words (sentence-aware chunks, see quarry_text/chunking.py).
PASSAGE_WORDS = 120
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
        chunk_words: int = PASSAGE_WORDS,
        before_swap: Callable[[], None] | None = None,
        max_staged_bytes: int = MAX_STAGED_BYTES,
        embedder: Embedder | None = None,
    ) -> None:
        """``data_dir`` None keeps the corpus in memory only; ``before_swap`` is called by
        a commit after persisting and before swapping (a seam for tests); ``embedder`` None
        means BM25 only (no vectors are computed or kept)."""
        self._analyzer = analyzer
        self._root = data_dir / "corpus" if data_dir is not None else None
        self._chunk_words = chunk_words
        self._embedder = embedder
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
        # Why the stored index is refused (built with other text settings), until a commit
        # rebuilds it; "" when there is nothing to refuse.
        self._outdated = ""

    @property
    def text_settings(self) -> dict[str, Any]:
        """What decides a document's passages and terms (the analyser's settings and version,
        the chunker's version), recorded in the index's manifest: an index built otherwise is
        refused until it is rebuilt (:mod:`index.textsettings`)."""
        return textsettings.current(self._analyzer.config)

    def load(self) -> None:
        """Load the persisted index, if any; a damaged one is logged and left unused."""
        if self._root is None:
            return
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            self._seq = max(storage.generations(self._root), default=0)
            loaded = storage.load(self._root, self._chunk_words, self.text_settings)
        except storage.BuiltOtherwiseError as err:
            self._refuse(err.differences)
            return
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
                "embedded": self._snapshot.embedded,
                "committed_at": self._snapshot.committed_at,
            },
        )
        if self.needs_vectors():
            logger.info("stored passages lack this model's vectors: the next commit adds them")

    def _refuse(self, differences: list[str]) -> None:
        """Leave the stored index unused, and say why on every search until a commit
        rebuilds it (the listing is empty meanwhile, so an indexer re-adds every document)."""
        self._outdated = textsettings.refusal(differences)
        logger.warning(
            "corpus index refused", extra={"path": str(self._root), "reason": self._outdated}
        )

    def _check_current(self) -> None:
        """IndexOutdatedError while the stored index waits to be rebuilt."""
        if self._outdated:
            raise IndexOutdatedError(self._outdated)

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
        return CorpusStats(
            len(snap.infos),
            snap.n_chunks,
            len(self._staged),
            snap.committed_at,
            snap.embedded,
            snap.embedding_model,
        )

    @property
    def dense(self) -> bool:
        """True when passages are embedded (an embedder was given)."""
        return self._embedder is not None

    def needs_vectors(self) -> bool:
        """True when an embedder is present but committed passages lack its vectors (a
        model added or changed since they were stored, or a stop mid-embedding); the next
        commit embeds them, even with nothing staged."""
        e, snap = self._embedder, self._snapshot
        return e is not None and snap.n_chunks > 0 and not snap.has_vectors(e.name)

    def commit(self) -> CorpusStats:
        """Make the staged changes searchable (CPU- and I/O-heavy: call from a thread).

        Raises CorpusStorageError when the new index cannot be written; the previous one
        then stays current and the changes stay staged.
        """
        with self._commit_lock:
            with self._lock:
                taken = self._in_flight = dict(self._staged)
                old = self._snapshot
            if not taken and not self._outdated:
                self._fill_vectors()  # e.g. the model is new since the passages were stored
                return self.stats()
            start = time.perf_counter()
            added = [p for p in taken.values() if p is not None]
            try:
                new = self._build(old, taken, added)
                with self._lock:
                    self._snapshot = new
                    self._outdated = ""  # written with today's settings
                    for doc_id, p in taken.items():
                        # A change staged again during the build stays pending.
                        if doc_id in self._staged and self._staged[doc_id] is p:
                            del self._staged[doc_id]
            finally:
                with self._lock:
                    self._in_flight = {}
            build_ms = round((time.perf_counter() - start) * 1000, 1)
            self._fill_vectors()
            stats = self.stats()
        logger.info(
            "corpus committed",
            extra={
                "documents": stats.documents,
                "chunks": stats.chunks,
                "upserted": len(added),
                "removed": len(taken) - len(added),
                "pending": stats.pending,
                "embedded": stats.embedded,
                "build_ms": build_ms,
                "total_ms": round((time.perf_counter() - start) * 1000, 1),
            },
        )
        return stats

    def _build(
        self, old: Snapshot, taken: dict[str, Prepared | None], added: list[Prepared]
    ) -> Snapshot:
        """The next snapshot, persisted (when there is a data directory), not yet current."""
        drop = set(taken) & old.positions.keys()
        merged = index.merge(old, drop, added)
        merged = self._with_vectors(merged, old, drop)
        committed_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        new = self._persist(merged, committed_at)
        if self._before_swap is not None:
            self._before_swap()
        return new

    def _with_vectors(self, merged: index.Merged, old: Snapshot, drop: set[str]) -> index.Merged:
        """``merged`` with one row per chunk, in its chunk order (kept, then added): kept
        chunks keep their stored vectors, the rest are zero rows that :meth:`_fill_vectors`
        embeds once the commit is searchable."""
        e = self._embedder
        if e is None or merged.chunk_len.size == 0 or not old.vectors_of(e.name):
            return merged  # nothing to keep: _fill_vectors embeds every passage
        _, keep_chunk = index.kept(old, drop)
        vectors = np.zeros((merged.chunk_len.size, old.vectors.shape[1]), np.float32)
        vectors[: int(keep_chunk.sum())] = old.vectors[keep_chunk]
        return replace(merged, vectors=vectors, embedding_model=e.name)

    def _fill_vectors(self) -> None:
        """Embed the current snapshot's passages that have no vector (once each), persist
        and swap in the result. Called by a commit after its swap, so new documents are
        searchable by BM25 while their passages are embedded. A failing model leaves the
        snapshot as it is (BM25 for the new passages) with a warning, never an error."""
        snap, e = self._snapshot, self._embedder
        if e is None or snap.n_chunks == 0 or snap.has_vectors(e.name):
            return
        start = time.perf_counter()
        rows = snap.vectors if snap.vectors_of(e.name) else no_vectors()
        missing = np.flatnonzero(~snap.present) if rows.size else np.arange(snap.n_chunks)
        try:
            fresh = embed_all(e, [snap.chunk_text.get(i) for i in missing.tolist()])
            vectors = np.zeros((snap.n_chunks, fresh.shape[1]), np.float32)
            if rows.size:
                vectors[:] = rows
            vectors[missing] = fresh
            merged = replace(index.merge(snap, set(), []), vectors=vectors, embedding_model=e.name)
            new = self._persist(merged, snap.committed_at)
        # The model (or the disk) failing must not lose the commit: BM25 until the next one.
        except Exception as err:  # noqa: BLE001
            logger.warning(
                "embedding failed: this commit is searchable by BM25 alone",
                extra={"reason": f"{type(err).__name__}: {str(err)[:300]}"},
            )
            return
        with self._lock:
            if self._snapshot is snap:
                self._snapshot = new
        logger.info(
            "passages embedded",
            extra={
                "model": e.name,
                "embedded": len(missing),
                "reused": snap.n_chunks - len(missing),
                "embed_ms": round((time.perf_counter() - start) * 1000, 1),
            },
        )

    def _persist(self, merged: index.Merged, committed_at: str) -> Snapshot:
        if self._root is None:
            return index.in_memory(merged, committed_at)
        try:
            # Past every generation on disk: a failed commit may have left one behind.
            self._seq = max([self._seq, *storage.generations(self._root)]) + 1
            return storage.write(
                self._root, self._seq, merged, committed_at, self._chunk_words, self.text_settings
            )
        except OSError as err:
            logger.exception("could not write the corpus index")
            raise CorpusStorageError("could not write the corpus index") from err

    def search(self, query: str, top_k: int = DEFAULT_TOP_K) -> tuple[list[Hit], int]:
        """Documents ranked by their best chunk's BM25 (ties: by id), each with a snippet of
        that chunk; and how many documents the searchable index holds. IndexOutdatedError
        while the stored index waits to be rebuilt."""
        self._check_current()
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

    def passages(
        self, queries: Sequence[str], params: PassageParams
    ) -> tuple[list[PassageHit], str, int]:
        """Passages for ``queries`` (BM25 + dense fused by RRF when the committed passages
        have this model's vectors, else BM25), the retrieval used ("hybrid" or "bm25"), and
        how many documents the searchable index holds. CPU-heavy: call from a thread.
        IndexOutdatedError while the stored index waits to be rebuilt."""
        self._check_current()
        snap = self._snapshot
        e = self._embedder
        query_vectors = None
        if e is not None and snap.n_chunks and snap.embedded and snap.vectors_of(e.name):
            try:
                query_vectors = e.embed(list(queries))
            except Exception as err:  # noqa: BLE001 - a failing model degrades to BM25
                logger.warning(
                    "embedding the queries failed: BM25 alone",
                    extra={"reason": f"{type(err).__name__}: {str(err)[:300]}"},
                )
        hits = search_passages(self._analyzer, snap, queries, query_vectors, params)
        hits = [
            replace(h, page=snap.infos[snap.positions[h.document_id]].page_of(h.index))
            for h in hits
        ]
        return hits, "hybrid" if query_vectors is not None else "bm25", len(snap.infos)

    def get(self, doc_id: str) -> Document:
        """The committed document ``doc_id``; NotFoundError when it is not searchable,
        IndexOutdatedError while the stored index waits to be rebuilt."""
        self._check_current()
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
