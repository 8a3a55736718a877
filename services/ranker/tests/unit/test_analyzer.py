"""The shared analyser: tokens, stop-words, stemming, the ASCII fast path."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st
from ranker.analyzer import TOKEN_RE, Analyzer, AnalyzerConfig


def test_lowercases_splits_on_punctuation_and_underscore() -> None:
    assert Analyzer.surface_tokens("Hello, World! snake_case C++ Python 3.11") == [
        "hello",
        "world",
        "snake",
        "case",
        "c",
        "python",
        "3",
        "11",
    ]


def test_unicode_letters_and_cjk_characters() -> None:
    assert Analyzer.surface_tokens("Über Straße — naïve café") == [
        "über",
        "straße",
        "naïve",
        "café",
    ]
    # CJK has no spaces: one token per character, so a query can match part of a run.
    assert Analyzer.surface_tokens("搜索引擎 Quarry") == ["搜", "索", "引", "擎", "quarry"]
    assert Analyzer.surface_tokens("Привет, мир") == ["привет", "мир"]


@given(st.text(alphabet=string.printable, max_size=200))
def test_ascii_fast_path_matches_the_regex(text: str) -> None:
    assert Analyzer.surface_tokens(text) == TOKEN_RE.findall(text.lower())


@given(st.text(max_size=200))
def test_any_unicode_text_tokenises(text: str) -> None:
    terms = Analyzer().terms(text)
    assert all(t and t == t.strip() for t in terms)


def test_stopwords_and_contraction_remnants_are_dropped() -> None:
    analyzer = Analyzer(AnalyzerConfig(stem=False))
    assert analyzer.terms("It's the end of the road, isn't it") == ["end", "road", "isn"]


def test_stemming_conflates_inflections() -> None:
    analyzer = Analyzer()
    assert analyzer.terms("installing installs installed") == ["instal", "instal", "instal"]
    assert analyzer.query_terms("Install the guide, installing guides") == ["instal", "guid"]


def test_options_off_keep_surface_forms() -> None:
    analyzer = Analyzer(AnalyzerConfig(stem=False, stopwords=False))
    assert analyzer.terms("The Running dogs") == ["the", "running", "dogs"]


def test_stem_cache_survives_overflow(monkeypatch: object) -> None:
    import ranker.analyzer as mod

    analyzer = Analyzer()
    setattr(mod, "STEM_CACHE_MAX", 3)  # noqa: B010 - the constant is read at call time
    try:
        for word in ("alpha", "betas", "gammas", "deltas", "epsilons"):
            assert analyzer.terms(f"{word} running") == [analyzer.stems([word])[word], "run"]
        assert len(analyzer._cache) <= 5
    finally:
        setattr(mod, "STEM_CACHE_MAX", 500_000)  # noqa: B010
