"""The searchable corpus: an immutable snapshot of documents, passages (chunks), BM25
postings and, when dense retrieval is on, one embedding per passage.

Postings are kept per term (CSC: ``term_ptr`` delimits each term's chunk ids and term
frequencies); scores are computed at query time from tf, chunk length and df, so a commit
never rescales stored weights. The formula is bm25s's Lucene variant (k1 1.5, b 0.75, the text
library's :mod:`quarry_text.bm25`), over chunk lengths counting every token, exactly as
RankChunks scores chunks; a unit test holds both to the same numbers and to rank_bm25.

bm25s itself is not used for the corpus: it rebuilds its score matrix from scratch on
every index() and has no incremental update, while merging postings is a few numpy
operations. bench/corpus, 10k documents (54 MB of markdown) on the shared 2-core box:
bm25s tokenize + index 6.4 s against analysis + merge + persist 6.6 s for a first build,
but a commit of 1% changed documents takes 1.1 s here against a full 6.4 s rebuild;
scoring + best chunk per document 0.8 ms against 2.5 ms. Persistence is our own format
(:mod:`.storage`) for the same reason, and because the texts, vocabulary and document
list must be saved with the matrix anyway.
"""

from __future__ import annotations

import itertools
import mmap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from quarry_text.bm25 import idf, term_scores

from index.analysis import Prepared
from index.types import DocumentInfo

Ints = npt.NDArray[np.int32]
Offsets = npt.NDArray[np.int64]
Vectors = npt.NDArray[np.float32]
Buffer = bytes | mmap.mmap
# A vocabulary with more than this share of terms no document uses any more is compacted.
STALE_TERMS_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class TextBlob:
    """Many UTF-8 texts back to back: text ``i`` is ``buffer[offsets[i]:offsets[i + 1]]``."""

    buffer: Buffer
    offsets: Offsets

    def get(self, i: int) -> str:
        """Text ``i``."""
        return self.buffer[int(self.offsets[i]) : int(self.offsets[i + 1])].decode()

    def span(self, start: int, stop: int) -> memoryview:
        """Texts ``start`` to ``stop - 1`` as one view (no copy)."""
        return memoryview(self.buffer)[int(self.offsets[start]) : int(self.offsets[stop])]


def offsets(lengths: Iterable[int]) -> Offsets:
    """Offsets of texts of ``lengths`` bytes laid back to back."""
    return np.concatenate(([0], np.cumsum(np.fromiter(lengths, np.int64)))).astype(np.int64)


def _fits(blob: TextBlob, n: int) -> bool:
    """True when ``blob`` holds ``n`` texts that tile its buffer exactly."""
    off = blob.offsets
    return (
        len(off) == n + 1
        and off[0] == 0
        and off[-1] == len(blob.buffer)
        and bool(np.all(np.diff(off) >= 0))
    )


def _empty_ints() -> Ints:
    return np.zeros(0, np.int32)


def no_vectors() -> Vectors:
    """The vectors of a snapshot without embeddings."""
    return np.zeros((0, 0), np.float32)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One committed state of the corpus; never mutated, so queries need no lock."""

    infos: tuple[DocumentInfo, ...] = ()
    doc_start: Offsets = field(default_factory=lambda: np.zeros(1, np.int64))
    chunk_len: Ints = field(default_factory=_empty_ints)
    vocab: tuple[str, ...] = ()
    term_ptr: Offsets = field(default_factory=lambda: np.zeros(1, np.int64))
    post_chunk: Ints = field(default_factory=_empty_ints)
    post_tf: Ints = field(default_factory=_empty_ints)
    markdown: TextBlob = field(default_factory=lambda: TextBlob(b"", np.zeros(1, np.int64)))
    chunk_text: TextBlob = field(default_factory=lambda: TextBlob(b"", np.zeros(1, np.int64)))
    committed_at: str = ""
    # One unit vector per chunk, from ``embedding_model``; (0, 0) and "" when none.
    vectors: Vectors = field(default_factory=no_vectors)
    embedding_model: str = ""
    positions: dict[str, int] = field(init=False)
    term_ids: dict[str, int] = field(init=False)
    chunk_doc: Ints = field(init=False)
    avg_len: float = field(init=False)
    nonempty: Offsets = field(init=False)  # documents with at least one chunk
    # Chunks with a vector (unit vectors are never zero; a zero row waits to be embedded).
    present: npt.NDArray[np.bool_] = field(init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # derived lookups of a frozen dataclass
        set_(self, "positions", {info.id: i for i, info in enumerate(self.infos)})
        set_(self, "term_ids", {t: i for i, t in enumerate(self.vocab)})
        per_doc = np.diff(self.doc_start)
        set_(self, "chunk_doc", np.repeat(np.arange(len(self.infos), dtype=np.int32), per_doc))
        set_(self, "avg_len", float(self.chunk_len.mean()) if len(self.chunk_len) else 0.0)
        set_(self, "nonempty", np.flatnonzero(per_doc > 0))
        rows = self.vectors
        present = np.any(rows != 0, axis=1) if rows.size else np.zeros(len(rows), np.bool_)
        set_(self, "present", present)

    def check(self) -> None:
        """Raise ValueError unless the arrays fit together (a loaded index may be damaged)."""
        n_docs, n_chunks, n_post = len(self.infos), len(self.chunk_len), len(self.post_chunk)
        ok = (
            len(self.doc_start) == n_docs + 1
            and self.doc_start[0] == 0
            and self.doc_start[-1] == n_chunks
            and bool(np.all(np.diff(self.doc_start) >= 0))
            and len(self.term_ptr) == len(self.vocab) + 1
            and self.term_ptr[0] == 0
            and self.term_ptr[-1] == n_post
            and bool(np.all(np.diff(self.term_ptr) >= 0))
            and len(self.post_tf) == n_post
            and (n_post == 0 or (self.post_chunk.min() >= 0 and self.post_chunk.max() < n_chunks))
            and _fits(self.markdown, n_docs)
            and _fits(self.chunk_text, n_chunks)
            and len(self.positions) == n_docs
            and (self.vectors.size == 0 or self.vectors.shape[0] == n_chunks)
        )
        if not ok:
            raise ValueError("corpus index arrays do not fit together")

    @property
    def n_chunks(self) -> int:
        """Chunks in the index."""
        return len(self.chunk_len)

    @property
    def embedded(self) -> int:
        """Chunks with a stored vector."""
        return int(self.present.sum()) if self.embedding_model else 0

    def vectors_of(self, model: str) -> bool:
        """True when the stored vectors (one row per chunk, some maybe not embedded yet)
        come from ``model``."""
        return (
            bool(model)
            and model == self.embedding_model
            and self.vectors.ndim == 2
            and self.vectors.shape[0] == self.n_chunks
        )

    def has_vectors(self, model: str) -> bool:
        """True when every chunk has a vector from ``model``."""
        return self.vectors_of(model) and self.embedded == self.n_chunks

    def scores(self, term_ids: Sequence[int]) -> npt.NDArray[np.float64]:
        """BM25 of every chunk for the given (distinct) term ids."""
        n = self.n_chunks
        out = np.zeros(n, np.float64)
        for t in term_ids:
            start, stop = int(self.term_ptr[t]), int(self.term_ptr[t + 1])
            df = stop - start
            if df == 0:
                continue
            chunks = self.post_chunk[start:stop]
            tf = self.post_tf[start:stop].astype(np.float64)
            out[chunks] += term_scores(idf(df, n), tf, self.chunk_len[chunks], self.avg_len)
        return out

    def best_per_document(self, scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Each document's best chunk score (0 for a document without chunks)."""
        out = np.zeros(len(self.infos), np.float64)
        if len(self.nonempty):
            # Chunks are contiguous per document: one reduceat over the non-empty ones.
            out[self.nonempty] = np.maximum.reduceat(scores, self.doc_start[self.nonempty])
        return out

    def best_chunk(self, doc: int, scores: npt.NDArray[np.float64]) -> int:
        """The document's best chunk (the first of equals)."""
        start, stop = int(self.doc_start[doc]), int(self.doc_start[doc + 1])
        return start + int(np.argmax(scores[start:stop]))


@dataclass(frozen=True, slots=True)
class Merged:
    """A new snapshot's arrays, and its texts as parts still to be laid out (in memory or
    in a file): markdown per document, chunk texts per run of chunks."""

    infos: tuple[DocumentInfo, ...]
    doc_start: Offsets
    chunk_len: Ints
    vocab: tuple[str, ...]
    term_ptr: Offsets
    post_chunk: Ints
    post_tf: Ints
    markdown_parts: list[bytes | memoryview]
    markdown_offsets: Offsets
    chunk_parts: list[bytes | memoryview]
    chunk_offsets: Offsets
    vectors: Vectors = field(default_factory=no_vectors)
    embedding_model: str = ""


def kept(old: Snapshot, drop: set[str]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Masks of the documents and chunks of ``old`` that a merge dropping ``drop`` keeps."""
    keep_doc = np.fromiter((i.id not in drop for i in old.infos), np.bool_, len(old.infos))
    return keep_doc, keep_doc[old.chunk_doc]


def _texts(
    old: Snapshot, keep_doc: npt.NDArray[np.bool_], added: Sequence[Prepared]
) -> tuple[list[bytes | memoryview], Offsets, list[bytes | memoryview], Offsets]:
    """Markdown and chunk-text parts of the new snapshot: kept documents' bytes are views
    of the old snapshot's, added documents' their prepared bytes (no copies)."""
    md_parts: list[bytes | memoryview] = []
    md_lens: list[int] = []
    ch_parts: list[bytes | memoryview] = []
    ch_lens: list[int] = []
    old_md = np.diff(old.markdown.offsets)
    old_ch = np.diff(old.chunk_text.offsets)
    for d in np.flatnonzero(keep_doc).tolist():
        md_parts.append(old.markdown.span(d, d + 1))
        md_lens.append(int(old_md[d]))
        first, last = int(old.doc_start[d]), int(old.doc_start[d + 1])
        ch_parts.append(old.chunk_text.span(first, last))
        ch_lens += old_ch[first:last].tolist()
    for p in added:
        md_parts.append(p.markdown)
        md_lens.append(len(p.markdown))
        ch_parts.append(p.chunk_text)
        ch_lens += p.chunk_sizes.tolist()
    return md_parts, offsets(md_lens), ch_parts, offsets(ch_lens)


def _compact(vocab: list[str], term_ptr: Offsets) -> tuple[list[str], Offsets]:
    """Drop terms no chunk uses any more, when they are a large share of the vocabulary."""
    used = np.diff(term_ptr) > 0
    if len(vocab) - int(used.sum()) <= STALE_TERMS_SHARE * len(vocab):
        return vocab, term_ptr
    kept = np.flatnonzero(used)
    return [vocab[i] for i in kept.tolist()], np.concatenate(([0], term_ptr[kept + 1]))


def _term_ids(ids: dict[str, int], added: Sequence[Prepared]) -> Ints:
    """Ids of the added documents' terms, in order; new terms are appended to ``ids``.
    (C-level iteration: a Python-level lookup per term was most of a large commit.)"""
    flat = list(itertools.chain.from_iterable(p.terms for p in added))
    new = [t for t in dict.fromkeys(flat) if t not in ids]
    ids.update(zip(new, range(len(ids), len(ids) + len(new)), strict=True))
    return np.fromiter(map(ids.__getitem__, flat), np.int32, len(flat))


def merge(old: Snapshot, drop: set[str], added: Sequence[Prepared]) -> Merged:
    """The next snapshot: ``old`` without the documents in ``drop``, plus ``added`` (ids in
    ``added`` must be in ``drop`` or new). Kept documents keep their order; added ones
    follow."""
    keep_doc, keep_chunk = kept(old, drop)
    new_chunk = (np.cumsum(keep_chunk) - 1).astype(np.int32)
    old_terms = np.repeat(np.arange(len(old.vocab), dtype=np.int32), np.diff(old.term_ptr))
    live = keep_chunk[old.post_chunk]
    terms, chunks, tfs = [old_terms[live]], [new_chunk[old.post_chunk[live]]], [old.post_tf[live]]
    ids = dict(old.term_ids)  # a copy: the old snapshot keeps serving queries
    base = int(keep_chunk.sum())
    per_doc = np.diff(old.doc_start)[keep_doc].tolist()
    lengths = [old.chunk_len[keep_chunk]]
    new_terms = _term_ids(ids, added)
    for p in added:
        chunks.append(p.term_chunk + base)
        tfs.append(p.tfs)
        lengths.append(p.lengths)
        base += p.n_chunks
        per_doc.append(p.n_chunks)
    all_terms = np.concatenate([*terms, new_terms])
    order = np.argsort(all_terms, kind="stable")
    vocab = list(ids)
    term_ptr = np.concatenate(([0], np.cumsum(np.bincount(all_terms, minlength=len(vocab)))))
    vocab, term_ptr = _compact(vocab, term_ptr.astype(np.int64))
    infos = tuple(old.infos[i] for i in np.flatnonzero(keep_doc).tolist())
    md_parts, md_off, ch_parts, ch_off = _texts(old, keep_doc, added)
    return Merged(
        infos=infos + tuple(p.info for p in added),
        doc_start=np.concatenate(([0], np.cumsum(per_doc, dtype=np.int64))).astype(np.int64),
        chunk_len=np.concatenate(lengths).astype(np.int32),
        vocab=tuple(vocab),
        term_ptr=term_ptr,
        post_chunk=np.concatenate(chunks).astype(np.int32)[order],
        post_tf=np.concatenate(tfs).astype(np.int32)[order],
        markdown_parts=md_parts,
        markdown_offsets=md_off,
        chunk_parts=ch_parts,
        chunk_offsets=ch_off,
    )


def in_memory(merged: Merged, committed_at: str) -> Snapshot:
    """The snapshot of ``merged`` with its texts joined in memory."""
    return from_merged(
        merged,
        TextBlob(b"".join(merged.markdown_parts), merged.markdown_offsets),
        TextBlob(b"".join(merged.chunk_parts), merged.chunk_offsets),
        committed_at,
    )


def from_merged(
    merged: Merged, markdown: TextBlob, chunk_text: TextBlob, committed_at: str
) -> Snapshot:
    """The snapshot of ``merged`` over texts laid out by the caller."""
    return Snapshot(
        infos=merged.infos,
        doc_start=merged.doc_start,
        chunk_len=merged.chunk_len,
        vocab=merged.vocab,
        term_ptr=merged.term_ptr,
        post_chunk=merged.post_chunk,
        post_tf=merged.post_tf,
        markdown=markdown,
        chunk_text=chunk_text,
        committed_at=committed_at,
        vectors=merged.vectors,
        embedding_model=merged.embedding_model,
    )
