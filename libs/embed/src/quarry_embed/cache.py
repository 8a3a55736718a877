"""A bounded LRU of vectors by text hash, in front of an :class:`Embedder` (cachetools'
``LRUCache``, the project's one cache library; docs/architecture.md)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from cachetools import LRUCache

from quarry_embed.embedder import DIM, Vectors


class Embeds(Protocol):
    """Anything that embeds texts as the Embedder does."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised vectors, one row per text."""
        ...


def text_key(text: str) -> bytes:
    """The cache key of a text: its blake2b-128 digest (16 bytes instead of the text)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class CachedEmbedder:
    """Embeds only texts it has not seen recently; thread-safe.

    The model runs outside the lock, so two threads may embed the same new text at once:
    both get the same vector, which costs a little CPU but never blocks a caller on another.
    """

    def __init__(self, inner: Embeds, *, max_entries: int = 50_000) -> None:
        """Keep at most ``max_entries`` vectors (1.5 KiB each: 50,000 is ~77 MiB)."""
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self._inner = inner
        # Not thread-safe by itself: every access holds _lock.
        self._vectors: LRUCache[bytes, Vectors] = LRUCache(max_entries)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._vectors)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts`` (cached ones reused), shape ``(len(texts), 384)``."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        todo: dict[bytes, list[int]] = {}
        with self._lock:
            for i, key in enumerate(keys):
                vector = self._vectors.get(key)  # a hit becomes the most recently used
                if vector is None:
                    todo.setdefault(key, []).append(i)
                else:
                    out[i] = vector
            self.hits += len(keys) - sum(len(v) for v in todo.values())
            self.misses += len(todo)
        if not todo:
            return out
        fresh = self._inner.embed([texts[rows[0]] for rows in todo.values()])
        with self._lock:
            for (key, rows), vector in zip(todo.items(), fresh, strict=True):
                out[rows] = vector
                self._vectors[key] = vector.copy()  # the least recently used go
        return out
