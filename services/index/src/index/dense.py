"""The embedding port (dense retrieval) and the loader of the real model; no transport.

The index depends on :class:`Embedder` only; the model itself is the shared ``quarry_embed``
library (all-MiniLM-L6-v2 on onnxruntime), imported when the service starts. When it cannot
be imported or loaded, the index ranks by BM25 alone and says so once in the log: a missing
model is a degraded mode, never an error.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]
# Texts handed to the embedder per call (it batches them further, see MODEL_BATCH).
EMBED_BATCH = 64
# Texts per onnxruntime run. onnxruntime keeps its arena at the peak a run needed: 64
# passages of ~200 tokens left the process at 1,149 MB RSS with 32 per run and 317 MB with
# 4 per run (model alone: 220 MB), at the same speed on 2 cores (2026-11-24).
MODEL_BATCH = 4


class Embedder(Protocol):
    """Text to L2-normalised vectors; one instance is shared by every thread."""

    @property
    def name(self) -> str:
        """Identifies the model: stored vectors from another model are not reused."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """``(len(texts), dim)`` float32 vectors, each of unit length."""
        ...


class LibraryEmbedder:
    """Adapts ``quarry_embed``'s model to :class:`Embedder`."""

    def __init__(self, model: Any, name: str) -> None:
        self._model = model
        self._name = name

    @property
    def name(self) -> str:
        """The model's name."""
        return self._name

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The model's vectors as float32."""
        return np.asarray(self._model.embed(list(texts)), dtype=np.float32)


def load_embedder(
    enabled: bool, *, threads: int = 1, module: str = "quarry_embed"
) -> Embedder | None:
    """The embedding model using at most ``threads`` CPU threads, or None (BM25 only) when
    disabled or when it cannot be loaded."""
    if not enabled:
        logger.info("dense retrieval disabled (INDEX_DENSE=false): BM25 only")
        return None
    try:
        # Imported here, not at the top: a missing or broken package must not stop the
        # service, only turn dense retrieval off.
        lib = importlib.import_module(module)
        model = lib.Embedder.load(threads=threads, batch_size=MODEL_BATCH)
        name = str(getattr(lib, "MODEL_ID", "") or module)
        embedder = LibraryEmbedder(model, name)
        embedder.embed(["warm up"])  # fail here, at start, rather than at the first commit
    # Whatever goes wrong (no package, no model file, a broken runtime), BM25 still works.
    except Exception as err:  # noqa: BLE001
        logger.warning(
            "embedding model unavailable: passages are ranked by BM25 alone",
            extra={"reason": f"{type(err).__name__}: {str(err)[:300]}"},
        )
        return None
    logger.info("embedding model loaded", extra={"model": name})
    return embedder


def embed_all(embedder: Embedder, texts: Sequence[str], batch: int = EMBED_BATCH) -> Vectors:
    """Every text's vector, ``batch`` texts per model call (``(0, 0)`` for no texts)."""
    parts = [embedder.embed(texts[i : i + batch]) for i in range(0, len(texts), batch)]
    if not parts:
        return np.zeros((0, 0), np.float32)
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
