"""Content-type mapping, sniffing and charset decoding."""

from __future__ import annotations

import codecs

import pytest
from reader.content import decode, header_charset, kind_of, looks_binary, sniff
from reader.model import Kind

TEXT = "Le café de la gare sert un crème brûlée très apprécié des habitués. " * 4


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("text/html; charset=utf-8", Kind.HTML),
        ("TEXT/HTML", Kind.HTML),
        ("application/xhtml+xml", Kind.HTML),
        ("text/plain;charset=us-ascii", Kind.TEXT),
        ("application/pdf", Kind.PDF),
        ("application/octet-stream", None),
        ("image/png", None),
        ("application/json", None),
        ("video/mp4", None),
    ],
)
def test_kind_of(header: str, kind: Kind | None) -> None:
    assert kind_of(header) is kind


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"%PDF-1.7\n...", Kind.PDF),
        (b"<!DOCTYPE html><html>", Kind.HTML),
        (b"\xef\xbb\xbf  <html lang=en>", Kind.HTML),
        (b"<!-- generated --><head><title>x", Kind.HTML),
        (b"\x89PNG\r\n\x1a\n", None),
        (b'{"json": true}', None),
    ],
)
def test_sniff(head: bytes, kind: Kind | None) -> None:
    assert sniff(head) is kind


def test_looks_binary() -> None:
    assert looks_binary(b"GIF89a\x00\x01")
    assert not looks_binary(b"<html>plain</html>")
    assert not looks_binary(codecs.BOM_UTF16_LE + "<html>".encode("utf-16-le"))


@pytest.mark.parametrize(
    ("header", "charset"),
    [
        ("text/html; charset=UTF-8", "utf-8"),
        ('text/html; charset="iso-8859-1"', "iso-8859-1"),
        ("text/html", None),
    ],
)
def test_header_charset(header: str, charset: str | None) -> None:
    assert header_charset(header) == charset


@pytest.mark.parametrize(
    ("body", "declared"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (TEXT.encode("utf-8"), "iso-8859-1"),  # mislabelled UTF-8
        (TEXT.encode("cp1252"), "utf-8"),  # mislabelled cp1252
        (TEXT.encode("cp1252"), None),
        (TEXT.encode("cp1252"), "no-such-charset"),
        (f"<meta charset='windows-1252'><p>{TEXT}".encode("cp1252"), None),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "iso-8859-1"),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), None),
        (TEXT.encode("utf-8")[:-1] + "é".encode()[:1], None),  # cut inside a sequence
    ],
)
def test_decode_recovers_the_text(body: bytes, declared: str | None) -> None:
    assert "café de la gare" in decode(body, declared)
    assert "crème brûlée" in decode(body, declared)


def test_declared_legacy_charset_is_honoured() -> None:
    text = "Привет, мир. Это тестовая страница на русском языке. " * 3
    assert decode(text.encode("cp1251"), "windows-1251") == text
    assert decode(text.encode("koi8-r"), "koi8-r") == text
