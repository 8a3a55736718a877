"""Query-dependent snippets: a ~300-character window of whole words around the terms."""

from __future__ import annotations

import pytest
from index.snippet import (
    ELLIPSIS,
    SNIPPET_CHARS,
    _ascii_matches,
    _matches,
    _token_matches,
    snippet,
)
from quarry_text.analyzer import Analyzer

ANALYZER = Analyzer()


def _snip(text: str, query: str) -> str:
    return snippet(ANALYZER, text, ANALYZER.query_terms(query))


def test_short_text_is_returned_whole_with_markup_and_whitespace_collapsed() -> None:
    assert _snip("# Title\n\nSome **bold**   text.\n", "text") == "Title Some bold text."


def test_window_covers_the_terms_and_cuts_at_whole_words() -> None:
    words = [f"filler{i}" for i in range(300)]
    words[150:153] = ["Installing", "Python", "packages"]
    text = " ".join(words)
    out = _snip(text, "install python package")
    assert out.startswith(ELLIPSIS)
    assert out.endswith(ELLIPSIS)
    assert "Installing Python packages" in out
    assert len(out) <= SNIPPET_CHARS + 2
    body = out.strip(ELLIPSIS)
    assert all(w in words or w in {"Installing", "Python", "packages"} for w in body.split())
    assert body.split()[0] in text.split()


def test_prefers_the_window_with_most_distinct_terms() -> None:
    text = "alpha " + "pad " * 100 + "alpha " + "pad " * 100 + "beta gamma alpha " + "pad " * 100
    out = _snip(text, "alpha beta gamma")
    assert "beta gamma alpha" in out


def test_no_match_starts_at_the_beginning() -> None:
    text = "first words here " + "more " * 200
    out = _snip(text, "absent")
    assert out.startswith("first words here")
    assert out.endswith(ELLIPSIS)


def test_a_match_near_the_start_keeps_the_start() -> None:
    text = "Python is a language. " + "and more words " * 50
    assert _snip(text, "python").startswith("Python is a language.")


def test_cjk_and_one_enormous_token() -> None:
    cjk = "东京" * 400 + "庭園" + "东京" * 400
    out = _snip(cjk, "庭園")
    assert "庭園" in out
    assert len(out) <= SNIPPET_CHARS + 2
    huge = "x" * 5000
    out = _snip(f"{huge} needle", "needle")
    assert len(out) <= SNIPPET_CHARS + 2


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("Installing installs; INSTALL reinstall install_x x-install 3install", "install"),
        ("Dying dies die; happy happiness happier happily", "dying happy"),
        ("The a an of: stop words only and also some words", "the words"),
        ("python3 python 3 py python's pythons c c++ r", "python c r"),
    ],
)
def test_the_ascii_path_finds_what_the_token_path_finds(text: str, query: str) -> None:
    terms = ANALYZER.query_terms(query)
    expected = _token_matches(ANALYZER, text, terms)
    assert expected
    assert _ascii_matches(ANALYZER, text.lower(), terms) == expected
    assert _matches(ANALYZER, text, terms) == expected


def test_the_unicode_path_finds_what_the_token_path_finds() -> None:
    text = "Über die Straße, über-all ÜBER; 東京の庭園 and 東京 again; naïve naïvely"
    terms = ANALYZER.query_terms("über 東京 naïve")
    expected = _token_matches(ANALYZER, text, terms)
    assert len(expected) >= 5
    assert _matches(ANALYZER, text, terms) == expected
