"""The shared analyser: tokens, stop-words, stemming, the ASCII fast path."""

from __future__ import annotations

import json
import string

from hypothesis import given
from hypothesis import strategies as st
from quarry_text.analyzer import (
    ANALYZER_VERSION,
    STOPWORDS,
    STOPWORDS_ID,
    TOKEN_RE,
    Analyzer,
    AnalyzerConfig,
    _stopwords_id,
)


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
    import quarry_text.analyzer as mod

    analyzer = Analyzer()
    setattr(mod, "STEM_CACHE_MAX", 3)  # noqa: B010 - the constant is read at call time
    try:
        for word in ("alpha", "betas", "gammas", "deltas", "epsilons"):
            assert analyzer.terms(f"{word} running") == [analyzer.stems([word])[word], "run"]
        assert len(analyzer._cache) <= 5
    finally:
        setattr(mod, "STEM_CACHE_MAX", 500_000)  # noqa: B010


def test_flags_dotted_names_and_upper_case_keywords_are_terms_of_their_own() -> None:
    # Real strings of the eval's doc sets (the reader's markdown, escapes included).
    analyzer = Analyzer()
    assert "-u" in analyzer.query_terms("What does git push -u do?")
    assert "--force" in analyzer.query_terms("Is --force safe with push.default set?")
    assert "push.default" in analyzer.query_terms("Is --force safe with push.default set?")
    assert "json.dumps" in analyzer.query_terms("json.dumps(obj, indent=2)")
    assert "core.autocrlf" in analyzer.query_terms("What does core.autocrlf=input do?")
    assert "on conflict" in analyzer.query_terms("How does ON CONFLICT REPLACE work?")
    assert "sqlite_max_length" in analyzer.terms("macro SQLITE\\_MAX\\_LENGTH. The default")
    flags = analyzer.compound_terms("- -u\n- --set-upstream\n- --\\[no-\\]thin")
    assert flags == ["-u", "--set-upstream", "set-upstream", "--thin"]
    # The words stay terms too, and prose makes none of its dashes or full stops a compound.
    assert analyzer.terms("--force") == ["forc", "--force"]
    assert analyzer.compound_terms("It ends here. Then - a dash - and on conflict.") == []
    # git cherry-pick: "-x" appends a line, "-X<option>" passes a merge strategy option.
    assert analyzer.compound_terms("- -x\n- -X\\<option>\n- --Quiet") == ["-x", "-X", "--quiet"]


def test_compound_terms_never_collide_with_word_terms_and_can_be_switched_off() -> None:
    analyzer = Analyzer()
    words = analyzer.terms("git push u force core autocrlf on conflict")
    compounds = analyzer.compound_terms("git push -u --force core.autocrlf ON CONFLICT")
    assert compounds
    assert not set(words) & set(compounds)
    off = Analyzer(AnalyzerConfig(compounds=False))
    assert off.terms("git push -u core.autocrlf") == ["git", "push", "u", "core", "autocrlf"]
    assert AnalyzerConfig().record() != AnalyzerConfig(compounds=False).record()


def test_the_record_names_every_setting_that_changes_the_terms() -> None:
    # What an index's manifest keeps: two configs with equal records make equal terms.
    text = "Installing the packages with --force, json.dumps and ON CONFLICT"
    configs = [
        AnalyzerConfig(stem=s, stopwords=w, compounds=c)
        for s in (True, False)
        for w in (True, False)
        for c in (True, False)
    ]
    records = [json.dumps(c.record(), sort_keys=True) for c in configs]
    terms = [tuple(Analyzer(c).terms(text)) for c in configs]
    assert len(set(records)) == len(set(terms)) == len(configs)
    default = AnalyzerConfig().record()
    assert default["version"] == ANALYZER_VERSION
    assert default["stemmer"] == "english"
    assert default["stopwords"].startswith("lucene-en+contractions/")
    assert AnalyzerConfig(stem=False, stopwords=False).record()["stemmer"] == "none"
    assert AnalyzerConfig(stem=False, stopwords=False).record()["stopwords"] == "none"


def test_the_stopword_record_follows_the_list() -> None:
    # A bm25s upgrade that changed its list must change the record (and refuse old indexes).
    assert _stopwords_id(STOPWORDS) == STOPWORDS_ID
    assert _stopwords_id(STOPWORDS | {"also"}) != STOPWORDS_ID
    assert _stopwords_id(sorted(STOPWORDS, reverse=True)) == STOPWORDS_ID  # order-free
