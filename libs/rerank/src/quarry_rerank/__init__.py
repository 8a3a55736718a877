"""Quarry's passage reranker and support checker (sentence MaxSim over all-MiniLM-L6-v2)."""

from quarry_rerank.reranker import Embeds, Reranker, RerankTimeout
from quarry_rerank.sentences import split_sentences, units
from quarry_rerank.support import SupportChecker, Verdict, label_for

__all__ = [
    "Embeds",
    "RerankTimeout",
    "Reranker",
    "SupportChecker",
    "Verdict",
    "label_for",
    "split_sentences",
    "units",
]
