"""Content types and character sets (pure): what a body is and how to decode it."""

from __future__ import annotations

import codecs
import re

import charset_normalizer

from reader.model import Kind

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
_PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})

# The charset parameter of a Content-Type header: charset=utf-8 or charset="utf-8".
_CHARSET_PARAM = re.compile(rb"""charset\s*=\s*["']?\s*([a-zA-Z0-9._:-]{1,40})""", re.IGNORECASE)
# <meta charset="x"> or <meta http-equiv="Content-Type" content="text/html; charset=x">.
_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,300}?charset\s*=\s*["']?\s*([a-zA-Z0-9._:-]{1,40})""", re.I
)
# The start of an HTML document after optional BOM/whitespace/comments.
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title)\b", re.I | re.S
)

# How much of the start of a body is scanned for <meta charset> (browsers use 1024; pages
# with long <head> scripts often declare it later) and fed to statistical detection.
META_SCAN_BYTES = 4096
DETECT_BYTES = 64 * 1024


def media_type(content_type: str) -> str:
    """The lower-cased media type of a Content-Type value, without parameters."""
    return content_type.split(";", 1)[0].strip().lower()


def kind_of(content_type: str) -> Kind | None:
    """Map a Content-Type header to what the reader extracts; None when unsupported."""
    media = media_type(content_type)
    if media in _HTML_TYPES:
        return Kind.HTML
    if media in _TEXT_TYPES:
        return Kind.TEXT
    if media in _PDF_TYPES:
        return Kind.PDF
    return None


def sniff(head: bytes) -> Kind | None:
    """Guess the kind from the first bytes of a body that came without a Content-Type."""
    if head.startswith(b"%PDF-"):
        return Kind.PDF
    if _HTML_START.match(head.removeprefix(codecs.BOM_UTF8)):
        return Kind.HTML
    return None


def looks_binary(head: bytes) -> bool:
    """True when the first bytes carry NULs: a binary file mislabelled as text or HTML."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head[:1024]


def header_charset(content_type: str) -> str | None:
    """The charset parameter of a Content-Type header, if any."""
    match = _CHARSET_PARAM.search(content_type.encode("latin-1", "replace"))
    return match.group(1).decode("ascii").lower() if match else None


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _valid_utf8_prefix(body: bytes) -> bool:
    """True when ``body`` is UTF-8, allowing one sequence cut off at the end (truncation)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    except UnicodeDecodeError:
        return False
    return True


def decode(body: bytes, declared: str | None = None) -> str:
    """Decode a text body: BOM, valid UTF-8, header charset, meta charset, then detection.

    Valid multi-byte UTF-8 is taken before the declared charset because mislabelled pages are
    almost always UTF-8 served as latin-1/cp1252, and random legacy text is almost never
    valid UTF-8.
    """
    for bom, name in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                      (codecs.BOM_UTF16_BE, "utf-16-be")):  # fmt: skip
        if body.startswith(bom):
            return body[len(bom) :].decode(name, errors="replace")
    if not body.isascii() and _valid_utf8_prefix(body):
        return body.decode("utf-8", errors="replace")
    meta = _META_CHARSET.search(body[:META_SCAN_BYTES])
    candidates = (declared, meta.group(1).decode("ascii") if meta else None)
    for name in filter(None, map(_codec, candidates)):
        if name.startswith("utf-16"):
            continue  # a UTF-16 label without a BOM on an 8-bit body is always wrong
        try:
            return body.decode(name)
        except UnicodeDecodeError:
            continue
    detected = _detect(body[:DETECT_BYTES])
    return body.decode(detected or "utf-8", errors="replace")


def _detect(sample: bytes) -> str | None:
    """Statistical detection; among equally good guesses prefer windows-1252.

    Short Western-European samples score the same under cp1250/cp1252/cp1257; windows-1252
    is what the web's legacy pages overwhelmingly use (and what WHATWG maps latin-1 to).
    """
    matches = charset_normalizer.from_bytes(sample)
    best = matches.best()
    if best is None or not _codec(best.encoding):
        return None
    for match in matches:
        tied = match.chaos == best.chaos and match.coherence == best.coherence
        if tied and match.encoding == "cp1252":
            return "cp1252"
    return str(best.encoding)
