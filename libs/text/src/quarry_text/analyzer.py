"""The one text analyser shared by every index and query: the ranker's, the index's.

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
  that could match a query term (:mod:`quarry_text.termcounts`), so the options cost it next to
  nothing; RankResults analyses ~2,000 words, so they cost it ~0.2 ms.
- what they buy: stemming lets "installing" match "install" in 20-word snippets; stop-words
  matter for correctness more than speed: in BM25F over ~50 results the retrieved set is
  the corpus, so "the" in 3 titles gets a high idf and a result matching only "the" would
  earn a lexical rank. The list is bm25s's 33-word Lucene English list plus the remnants
  of English contractions ("it's" -> "it", "s").

Compound terms (on by default): the words alone lose what makes a technical name findable:
"--force" becomes "forc" (every "force" matches), "json.dumps" two common words, and "ON
CONFLICT" only "conflict" ("on" is a stop-word; every Git page about merge conflicts
matches). So besides its word terms a text also gets, as extra terms of their own, the
compounds it writes: dotted, underscored or hyphenated names ("core.autocrlf", "json.dumps",
"sqlite_max_length"), command-line flags ("-u", "--force", and "set-upstream" for
"--set-upstream"; a one-letter flag keeps its case: "-x" and "-X" differ) and pairs of
upper-case words one of which is a stop-word ("on conflict", "not null"). Compound terms
hold a "." "_" "-" or space, which word terms never do, so the two never collide; a
compound adds no length (it repeats words already counted).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

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


# A name with inner separators: "core.autocrlf", "json.dumps", "sqlite_max_length",
# "2008-04-16" (not inside a longer name or flag: no word character, "." or "-" before it).
_NAME_RE = re.compile(r"(?<![\w.-])[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)+")
# A command-line flag: "-u", "--force", "--set-upstream" (not a hyphen inside a word).
_FLAG_RE = re.compile(r"(?<![\w-])--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# Two upper-case words in a row (the second by lookahead, so pairs overlap).
_CAPS_RE = re.compile(r"\b([A-Z]{2,})(?=[ \t]+([A-Z]{2,})\b)")
# Bumped whenever the terms a text analyses to change, so a stored index built with other
# terms can be told apart (the index records it in its manifest; see ``AnalyzerConfig.record``).
# 1: words only; 2: compound terms beside them.
ANALYZER_VERSION = 2
# The Snowball algorithm PyStemmer runs when stemming is on.
STEMMER = "english"

# What stays of English contractions once the apostrophe splits them.
_CONTRACTION_REMNANTS = ("s", "t", "d", "ll", "m", "re", "ve")

# A warm service sees a few hundred thousand distinct surface forms at most; past this the
# cache is dropped and refilled rather than grown without bound.
STEM_CACHE_MAX = 500_000


# Stop-words for the upper-case pairs: whatever the analyser's own setting.
STOPWORDS = frozenset((*STOPWORDS_EN, *_CONTRACTION_REMNANTS))


def _stopwords_id(words: Iterable[str]) -> str:
    """The name of a stop-word list: its origin and a digest of its words. It names the list
    in an index's manifest: bm25s's list could change in an upgrade of bm25s, and a stored
    index counted without the new words must then be told apart."""
    digest = hashlib.sha256("\n".join(sorted(words)).encode()).hexdigest()
    return f"lucene-en+contractions/{digest[:12]}"


STOPWORDS_ID = _stopwords_id(STOPWORDS)


# The words that make a sentence a question and say nothing of its subject: interrogatives,
# auxiliaries and the asker's pronouns. Not index stop-words (a page may well be about "how" or
# "can"), but a question's coverage of a passage is measured without them: "What is speed
# mode?" asks about "speed mode", and a corpus without the word "what" is no less on topic
# (index/passages.py's relevance floor).
QUESTION_WORDS = frozenset(
    (
        *("what", "which", "who", "whom", "whose", "when", "where", "why", "how"),
        *("do", "does", "did", "done", "can", "could", "should", "would", "will", "shall"),
        *("may", "might", "must", "am", "are", "was", "were", "been", "being", "has", "have"),
        *("had", "i", "me", "my", "we", "our", "you", "your", "there", "here", "any", "some"),
        *("about", "tell", "explain", "please", "also", "much", "many"),
    )
)


def _has_caps(text: str) -> bool:
    """Whether ``text`` may hold two upper-case words in a row (a cheap pre-check)."""
    return _CAPS_RE.search(text) is not None


def is_compound(term: str) -> bool:
    """True for a compound term (it holds a separator no word term holds)."""
    return any(c in term for c in ".-_ ")


@dataclass(frozen=True)
class AnalyzerConfig:
    """Which optional analysis steps run."""

    stem: bool = True
    stopwords: bool = True
    compounds: bool = True

    def record(self) -> dict[str, Any]:
        """What decides a text's terms, as an index's manifest records it (JSON): the
        analyser's version, the stemmer ("none" when off), the stop-word list ("none" when
        off) and whether compound terms are made. Two analysers with equal records turn
        every text into the same terms."""
        return {
            "version": ANALYZER_VERSION,
            "stemmer": STEMMER if self.stem else "none",
            "stopwords": STOPWORDS_ID if self.stopwords else "none",
            "compounds": self.compounds,
        }


class Analyzer:
    """Turns text into index/query terms; thread-safe; one instance per process is enough."""

    def __init__(self, config: AnalyzerConfig | None = None) -> None:
        self.config = config or AnalyzerConfig()
        self._stop: frozenset[str] = STOPWORDS if self.config.stopwords else frozenset()
        self._stemmer = Stemmer.Stemmer(STEMMER) if self.config.stem else None
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

    def compound_terms(self, text: str) -> list[str]:
        """The compound terms of ``text`` (see the module doc), lowercased, in order, repeats
        kept; none when compounds are off."""
        if not self.config.compounds:
            return []
        if not any(c in text for c in ".-_") and not _has_caps(text):
            return []
        # The reader's markdown escapes "_", "[" and "-" ("SQLITE\\_MAX\\_LENGTH").
        plain = text.replace("\\", "") if "\\" in text else text
        # A man page's "--[no-]thin" documents "--thin" (and "--no-thin").
        plain = plain.replace("--[no-]", "--")
        out = [m.lower() for m in _NAME_RE.findall(plain)]
        for flag in _FLAG_RE.findall(plain):
            # Short flags keep their case: "-x" and "-X" are different options.
            flag = flag if flag[1] != "-" and len(flag) == 2 else flag.lower()
            out.append(flag)
            body = flag.lstrip("-")
            if "-" in body:
                out.append(body)
        stop = STOPWORDS
        for first, second in _CAPS_RE.findall(plain):
            a, b = first.lower(), second.lower()
            if a in stop or b in stop:
                out.append(f"{a} {b}")
        return out

    def terms(self, text: str) -> list[str]:
        """Index/query terms of ``text``: its word terms in order, then its compound terms;
        repeats kept."""
        toks = self.surface_tokens(text)
        if self._stop:
            stop = self._stop
            toks = [t for t in toks if t not in stop]
        compounds = self.compound_terms(text)
        if self._stemmer is None:
            return toks + compounds
        cache = self._cache
        try:  # warm path: every form is cached, one dict lookup per token
            return [cache[t] for t in toks] + compounds
        except KeyError:
            stems = self.stems(toks)
            return [stems[t] for t in toks] + compounds

    def query_terms(self, text: str) -> list[str]:
        """Distinct terms of a query, in first-occurrence order (repeats count once)."""
        return list(dict.fromkeys(self.terms(text)))

    def subject_terms(self, text: str) -> list[str]:
        """The query terms of ``text`` without its question words (``QUESTION_WORDS``): what
        the question is about (none for a question made of question words alone)."""
        terms = self.query_terms(text)
        asked = {t for t in self.surface_tokens(text) if t in QUESTION_WORDS}
        if not asked:
            return terms
        dropped = set(self.query_terms(" ".join(asked)))
        return [t for t in terms if t not in dropped]
