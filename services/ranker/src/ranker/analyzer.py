"""The one text analyser shared by every index and query in the ranker.

Pipeline: lowercase -> Unicode-aware tokens -> optional stop-word removal -> optional English
Snowball stemming (PyStemmer) through a per-process stem cache.

Tokens are maximal runs of Unicode letters and digits (``\\w`` without the underscore), any
length, so "c", "r" and the "3" of "python 3" stay searchable; CJK ideographs, kana and
Hangul syllables are written without spaces, so each of those characters is a token. ASCII
text (most of the web) takes a bytes ``translate`` + ``split`` fast path with the same
result as the regex, ~4x faster than it (11 vs 47 ms over 150k words).

Default (stemming on, stop-words on), chosen by measurement (bench/ranker, 156k words of
stdlib docstrings, warm caches, CPU per word on the shared 2-core box):
- surface tokens 0.11 us; + stop-words 0.13-0.15; + stemming through the stem cache 0.19-0.20;
  bm25s.tokenize with PyStemmer 0.55. RankChunks only analyses the distinct surface forms
  that could match a query term (:mod:`ranker.termcounts`), so the options cost it next to
  nothing; RankResults analyses ~2,000 words, so they cost it ~0.2 ms.
- what they buy: stemming lets "installing" match "install" in 20-word snippets; stop-words
  matter for correctness more than speed: in BM25F over ~50 results the retrieved set is
  the corpus, so "the" in 3 titles gets a high idf and a result matching only "the" would
  earn a lexical rank. The list is bm25s's 33-word Lucene English list plus the remnants
  of English contractions ("it's" -> "it", "s").
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

# Hiragana/katakana, CJK ideographs (+ extension A, compatibility), Hangul syllables.
CJK_CHARS = _CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# One CJK character, or a run of letters/digits that are not CJK (\w minus "_").
TOKEN_RE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
# Fast path for ASCII: every byte but [0-9a-z] becomes a space (text is lowercased first).
_ASCII_SEPARATORS = bytes(
    c if (0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A) else 0x20 for c in range(256)
)


def ascii_separators() -> bytes:
    """The ``bytes.translate`` table of the ASCII fast path (non-[0-9a-z] -> space)."""
    return _ASCII_SEPARATORS


# What stays of English contractions once the apostrophe splits them.
_CONTRACTION_REMNANTS = ("s", "t", "d", "ll", "m", "re", "ve")

# A warm service sees a few hundred thousand distinct surface forms at most; past this the
# cache is dropped and refilled rather than grown without bound.
STEM_CACHE_MAX = 500_000


@dataclass(frozen=True)
class AnalyzerConfig:
    """Which optional analysis steps run."""

    stem: bool = True
    stopwords: bool = True


class Analyzer:
    """Turns text into index/query terms; thread-safe; one instance per process is enough."""

    def __init__(self, config: AnalyzerConfig | None = None) -> None:
        self.config = config or AnalyzerConfig()
        stop = (*STOPWORDS_EN, *_CONTRACTION_REMNANTS) if self.config.stopwords else ()
        self._stop: frozenset[str] = frozenset(stop)
        self._stemmer = Stemmer.Stemmer("english") if self.config.stem else None
        # surface form -> stem; a plain dict: reads and writes are atomic under the GIL.
        self._cache: dict[str, str] = {}
        # PyStemmer objects keep internal state per call, so stemWords is serialised.
        self._lock = threading.Lock()

    @staticmethod
    def surface_tokens(text: str) -> list[str]:
        """Lowercased tokens of ``text`` before stop-words and stemming."""
        lowered = text.lower()
        if lowered.isascii():
            return lowered.encode().translate(_ASCII_SEPARATORS).decode().split()
        return TOKEN_RE.findall(lowered)

    def is_stopword(self, token: str) -> bool:
        """True when ``token`` (a surface token) is dropped as a stop-word."""
        return token in self._stop

    def stems(self, surface: Iterable[str]) -> dict[str, str]:
        """Map each distinct surface token to its term (its stem, or itself)."""
        distinct = set(surface)
        if self._stemmer is None:
            return {t: t for t in distinct}
        cache = self._cache
        if len(cache) > STEM_CACHE_MAX:
            cache.clear()
        # A local result, so a concurrent clear() cannot lose entries this call relies on.
        out = {t: s for t in distinct if (s := cache.get(t)) is not None}
        if len(out) < len(distinct):
            missing = [t for t in distinct if t not in out]
            with self._lock:
                stemmed = self._stemmer.stemWords(missing)
            new = dict(zip(missing, stemmed, strict=True))
            cache.update(new)
            out.update(new)
        return out

    def terms(self, text: str) -> list[str]:
        """Index/query terms of ``text``, in order, repeats kept."""
        toks = self.surface_tokens(text)
        if self._stop:
            stop = self._stop
            toks = [t for t in toks if t not in stop]
        if self._stemmer is None:
            return toks
        cache = self._cache
        try:  # warm path: every form is cached, one dict lookup per token
            return [cache[t] for t in toks]
        except KeyError:
            stems = self.stems(toks)
            return [stems[t] for t in toks]

    def query_terms(self, text: str) -> list[str]:
        """Distinct terms of a query, in first-occurrence order (repeats count once)."""
        return list(dict.fromkeys(self.terms(text)))
