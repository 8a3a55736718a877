"""The Article Extraction Benchmark's metric, as its ``evaluate.py`` computes it (pure).

Per page: 4-token shingles of ``\\w+`` tokens, TP/FP/FN over their multisets normalised by the
page's total (so long pages do not weigh more); precision and recall are means over pages, and
F1 is their harmonic mean. The dataset (181 pages, its ground truth and licence) is vendored
under ``bench/reader/aeb/`` from scrapinghub/article-extraction-benchmark at 4a3bc97.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent / "aeb"
_TOKEN = re.compile(r"\w+", re.UNICODE)
Counts = tuple[float, float, float]


def load() -> tuple[dict[str, str], dict[str, bytes], dict[str, str]]:
    """(expected article text, raw HTML bytes, page URL) per page id."""
    truth = json.loads(gzip.decompress((DATA / "ground-truth.json.gz").read_bytes()))
    expected = {key: str(item.get("articleBody", "")) for key, item in truth.items()}
    urls = {key: str(item.get("url", "")) for key, item in truth.items()}
    html = {key: gzip.decompress((DATA / "html" / f"{key}.html.gz").read_bytes()) for key in truth}
    return expected, html, urls


def _shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    return Counter(
        tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens[i : i + n]
    )


def counts(true: str, pred: str) -> Counts:
    """Normalised (TP, FP, FN) of one page."""
    want, got = _shingles(true), _shingles(pred)
    tp = fp = fn = 0.0
    for key in set(want) | set(got):
        w, g = want.get(key, 0), got.get(key, 0)
        tp, fp, fn = tp + min(w, g), fp + max(0, g - w), fn + max(0, w - g)
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fp == 0 else tp / (tp + fp)


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fn == 0 else tp / (tp + fn)


def score(expected: dict[str, str], predicted: dict[str, str]) -> tuple[float, float, float]:
    """(F1, precision, recall) over every page of ``expected``."""
    per_page = [counts(expected[key], predicted.get(key, "")) for key in expected]
    precision = statistics.mean(_precision(*c) for c in per_page if c[0] + c[1] > 0)
    recall = statistics.mean(_recall(*c) for c in per_page if c[0] + c[2] > 0)
    return 2 * precision * recall / (precision + recall), precision, recall
