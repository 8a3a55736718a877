"""Publication dates and language from markup."""

from __future__ import annotations

import pytest
import trafilatura
from reader.metadata import language, page_metadata, published_date


def _tree(head: str, body: str = "<p>x</p>", html_attrs: str = "") -> object:
    return trafilatura.load_html(
        f"<html {html_attrs}><head>{head}</head><body>{body}</body></html>"
    )


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (
            "<meta property='article:published_time' content='2021-03-04T10:00:00Z'>",
            "",
            "2021-03-04",
        ),
        ("<meta name='citation_publication_date' content='2019/7/1'>", "", "2019-07-01"),
        ("<meta name='date' content='20200229'>", "", "2020-02-29"),
        (
            '<script type="application/ld+json">{"@type": "NewsArticle", '
            '"datePublished": "2022-11-05T08:00:00+01:00"}</script>'
            "<meta name='date' content='2001-01-01'>",
            "",
            "2022-11-05",  # JSON-LD wins over generic meta
        ),
        ("", "<article><time datetime='2018-05-06'>6 May</time></article>", "2018-05-06"),
        ("<meta name='date' content='2021-02-30'>", "", ""),  # impossible day
        ("<meta name='date' content='1066-10-14'>", "", ""),  # before the web
        ("<meta name='date' content='yesterday'>", "", ""),
        ("", "<p>Published on 4 March 2021</p>", ""),  # prose is not markup
    ],
)
def test_published_date(head: str, body: str, expected: str) -> None:
    assert published_date(_tree(head, body or "<p>x</p>")) == expected


def test_metadata_from_meta_tags() -> None:
    tree = _tree(
        "<title>Tide tables | Harbour Office</title>"
        "<meta property='og:site_name' content='Harbour Office'>"
        "<meta name='author' content='Ada Lovelace'>",
        html_attrs="lang='en-GB'",
    )
    meta = page_metadata(tree)
    assert meta.title == "Tide tables"
    assert meta.site_name == "Harbour Office"
    assert meta.author == "Ada Lovelace"
    assert meta.language == "en-GB"
    assert language(_tree("<meta property='og:locale' content='pt_BR'>")) == "pt-BR"
