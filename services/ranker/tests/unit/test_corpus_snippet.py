"""Query-dependent snippets: a ~300-character window of whole words around the terms."""

from __future__ import annotations

from ranker.analyzer import Analyzer
from ranker.corpus.snippet import ELLIPSIS, SNIPPET_CHARS, snippet

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
