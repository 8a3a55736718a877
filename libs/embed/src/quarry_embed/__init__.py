"""Quarry's local sentence embedder (all-MiniLM-L6-v2, int8 ONNX on onnxruntime)."""

from quarry_embed.batches import batches
from quarry_embed.cache import CachedEmbedder, Embeds, text_key
from quarry_embed.embedder import (
    DIM,
    MAX_TOKENS,
    MODEL_ID,
    Embedder,
    EmbedderUnavailable,
    Vectors,
    default_model_path,
    load_or_none,
)

__all__ = [
    "DIM",
    "MAX_TOKENS",
    "MODEL_ID",
    "CachedEmbedder",
    "Embedder",
    "EmbedderUnavailable",
    "Embeds",
    "Vectors",
    "batches",
    "default_model_path",
    "load_or_none",
    "text_key",
]
