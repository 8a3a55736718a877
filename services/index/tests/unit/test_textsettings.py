"""The text settings an index's manifest records, and how a difference is told."""

from __future__ import annotations

from typing import Any

from index import textsettings
from quarry_text.analyzer import ANALYZER_VERSION, STOPWORDS_ID, AnalyzerConfig
from quarry_text.chunking import CHUNKER_VERSION

NOW = textsettings.current(AnalyzerConfig())


def _manifest(text: dict[str, Any], words: int = 120) -> dict[str, Any]:
    return {"format": 2, "passage_words": words, "text": text}


def test_an_index_built_now_has_no_differences() -> None:
    assert textsettings.differences(_manifest(NOW), NOW, 120) == []
    assert NOW == {
        "analyser": {
            "version": ANALYZER_VERSION,
            "stemmer": "english",
            "stopwords": STOPWORDS_ID,
            "compounds": True,
        },
        "chunker": CHUNKER_VERSION,
    }


def test_a_changed_stopword_list_is_told_apart_from_a_switched_setting() -> None:
    # bm25s changed its list in an upgrade: no setting to blame, the list's name differs.
    older = {**NOW, "analyser": {**NOW["analyser"], "stopwords": "lucene-en+contractions/0ld"}}
    (said,) = textsettings.differences(_manifest(older), NOW, 120)
    assert said == f"stopwords lucene-en+contractions/0ld (now {STOPWORDS_ID})"
    off = textsettings.current(AnalyzerConfig(stopwords=False))
    (said,) = textsettings.differences(_manifest(NOW), off, 120)
    assert said == f"stopwords {STOPWORDS_ID} (now none, INDEX_STOPWORDS)"


def test_another_analyser_version_is_one_difference_and_every_setting_is_named() -> None:
    newer = {"analyser": {"version": ANALYZER_VERSION + 1, "stemmer": "porter"}, "chunker": 9}
    assert textsettings.differences(_manifest(newer, 200), NOW, 120) == [
        f"analyser version {ANALYZER_VERSION + 1} (now {ANALYZER_VERSION})",
        f"chunker version 9 (now {CHUNKER_VERSION})",
        "200-word passages (now 120, INDEX_PASSAGE_WORDS)",
    ]


def test_old_manifests_are_read_explicitly() -> None:
    legacy = {
        "passage_words": 120,
        "analysis": "v2 stem=False stopwords=True compounds=False chunker=v2",
    }
    assert textsettings.recorded(legacy) == {
        "analyser": {
            "version": 2,
            "stemmer": "none",
            "stopwords": STOPWORDS_ID,
            "compounds": False,
        },
        "chunker": 2,
    }
    assert textsettings.recorded({"passage_words": 120}) == {
        "analyser": {"version": 1},
        "chunker": "unrecorded",
    }
    # A string in no known shape is no record either: refused like version 1.
    assert textsettings.recorded({"analysis": "something else"})["analyser"] == {"version": 1}
