"""The web UI's vendored libraries are exactly the pinned npm releases (scripts/ui_vendor.py)."""

from __future__ import annotations

from scripts.ui_vendor import STATIC, check, load


def test_vendored_files_match_their_pins_and_the_page_loads_them_with_integrity() -> None:
    assert check() == []


def test_the_page_loads_nothing_from_another_origin() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    assert "http://" not in html
    assert "https://" not in html
    for js in (STATIC / "js").glob("*.js"):
        text = js.read_text(encoding="utf-8")
        assert "https://" not in text, js.name
        assert "innerHTML =" not in text or js.name == "markdown.js", js.name


def test_every_pin_names_a_version_and_an_npm_integrity() -> None:
    for name, pin in load().items():
        assert pin["version"], name
        assert pin["integrity"].startswith("sha512-"), name
        assert pin["sri"].startswith("sha384-"), name
