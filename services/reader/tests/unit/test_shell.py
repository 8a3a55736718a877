"""JS-shell signals on real-looking page heads."""

from __future__ import annotations

from reader.shell import signals

from services.reader.tests.pages import ARTICLE


def test_react_root_with_noscript_is_a_shell() -> None:
    page = (
        b"<html><head><script defer src='/static/js/main.js'></script></head><body>"
        b"<noscript>You need to enable JavaScript to run this app.</noscript>"
        b'<div id="root"></div></body></html>'
    )
    seen = signals(page, 40)
    assert seen.shell
    assert seen.reason == "thin,empty_root,noscript"


def test_angular_and_next_markers_count() -> None:
    assert signals(b"<html ng-app='x'><body><app-root></app-root></body></html>", 0).framework
    next_page = b"<div id='__next'></div><script id='__NEXT_DATA__'>{}</script>"
    assert signals(next_page, 0).empty_root


def test_an_article_is_not_a_shell() -> None:
    assert not signals(ARTICLE, 2000).shell
    assert not signals(ARTICLE, 2000).thin


def test_thin_text_alone_is_not_enough() -> None:
    assert not signals(b"<html><body><p>Short note.</p></body></html>", 11).shell
