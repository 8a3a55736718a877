"""URL normalisation and duplicate merging."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ranker.model import SearchResult
from ranker.urls import merge_duplicates, normalize_url


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("HTTPS://Example.COM/a", "https://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com/", "https://example.com"),
        ("https://example.com/a?utm_source=x&UTM_Medium=y", "https://example.com/a"),
        ("https://example.com/a?id=3&gclid=abc&fbclid=def", "https://example.com/a?id=3"),
        ("https://example.com./a", "https://example.com/a"),
    ],
)
def test_variants_normalise_alike(a: str, b: str) -> None:
    assert normalize_url(a) == normalize_url(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.com/a", "http://example.com/a"),
        ("https://example.com:8443/a", "https://example.com/a"),
        ("https://example.com/A", "https://example.com/a"),
        ("https://example.com/a?id=3", "https://example.com/a?id=4"),
        ("https://example.com/a?x=1&y=2", "https://example.com/a?y=2&x=1"),
    ],
)
def test_different_pages_stay_apart(a: str, b: str) -> None:
    assert normalize_url(a) != normalize_url(b)


@given(st.text(max_size=100))
def test_never_raises(url: str) -> None:
    assert isinstance(normalize_url(url), str)


def test_odd_urls_are_their_own_key() -> None:
    assert normalize_url(" http://[::1 ") == "http://[::1"
    assert normalize_url("http://[::1]:8080/x/") == "http://[::1]:8080/x"


def test_merge_keeps_best_rank_and_union_of_engines() -> None:
    results = [
        SearchResult("https://a.org/x?utm_source=s", "A late", engine_rank=5, engines=("bing",)),
        SearchResult("https://b.org/", "B", engine_rank=2, engines=("ddg",)),
        SearchResult("https://A.org/x", "A early", engine_rank=1, engines=("google", "bing")),
    ]
    merged = merge_duplicates(results)
    assert [r.title for r in merged] == ["A early", "B"]
    assert merged[0].engines == ("bing", "google")
    assert merged[0].url == "https://A.org/x"


def test_unknown_engine_rank_sorts_last_and_ties_keep_input_order() -> None:
    results = [
        SearchResult("https://z.org/", engine_rank=0),
        SearchResult("https://b.org/", engine_rank=3),
        SearchResult("https://c.org/", engine_rank=3),
    ]
    assert [r.url for r in merge_duplicates(results)] == [
        "https://b.org/",
        "https://c.org/",
        "https://z.org/",
    ]
