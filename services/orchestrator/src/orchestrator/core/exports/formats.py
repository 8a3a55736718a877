"""The text export formats: JSON, BibTeX and RIS (Markdown is the document's own; HTML and PDF
are in ``html.py`` and ``pdf.py``). Pure: no I/O.

BibTeX and RIS are written here rather than with a library: each is a handful of fixed fields
per source (``@misc`` with ``url``/``howpublished``; ``TY - ELEC``), and the tests read both
back with independent parsers (bibtexparser, rispy), which is the check that matters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import orjson

from orchestrator.core.citations import cited_numbers, sentence_spans
from orchestrator.core.exports.document import Document, Part, Source
from orchestrator.core.support import mark_sentence

JSON_VERSION = 1
# BibTeX's special characters, escaped so a page title cannot break out of its field.
_BIB_SPECIAL = re.compile(r"([{}\\%&$#_^~])")
_BIB_REPLACE = {"\\": r"\textbackslash{}", "^": r"\^{}", "~": r"\~{}"}
_RIS_LINE = re.compile(r"[\r\n]+")


def graded_sentences(part: Part) -> list[dict[str, Any]]:
    """Every sentence that cites a source, with its citations and how well they support it."""
    texts = {s.n: "\n".join(s.passages) for s in part.sources}
    out = []
    for start, end in sentence_spans(part.body):
        sentence = part.body[start:end].strip()
        if not cited_numbers(sentence):
            continue
        mark = mark_sentence(sentence, texts)
        out.append(
            {
                "text": sentence,
                "citations": [n for n in cited_numbers(sentence) if n in texts],
                "support": mark.support,
                "score": round(mark.score, 3),
            }
        )
    return out


def _part_json(part: Part) -> dict[str, Any]:
    by_n = {s.n: s for s in part.sources}
    return {
        "question": part.heading or None,
        "status": part.status,
        "text": part.body,
        "citations": [{"n": n, **by_n[n].as_json()} for n in part.cited()],
        "sentences": graded_sentences(part),
        "sources": [s.as_json() for s in part.sources],
    }


def to_json(doc: Document) -> bytes:
    """Text, citations with their passages, sources and timings, as one JSON object."""
    return orjson.dumps(
        {
            "format": "quarry.export",
            "version": JSON_VERSION,
            "kind": doc.kind,
            "id": doc.id,
            "title": doc.title,
            "status": doc.status,
            "created_at": doc.created_at,
            "parts": [_part_json(p) for p in doc.parts],
            "timings_ms": dict(doc.timings_ms),
            "warnings": [dict(w) for w in doc.warnings],
        },
        option=orjson.OPT_INDENT_2,
    )


def _entries(doc: Document) -> Iterator[tuple[str, Part, Source]]:
    """Every source once per part, keyed so a conversation's turns never collide."""
    for part in doc.parts:
        for src in part.sources:
            yield f"quarry-{part.prefix}{src.n}", part, src


def _bib(text: str) -> str:
    text = " ".join(text.split())
    return _BIB_SPECIAL.sub(lambda m: _BIB_REPLACE.get(m.group(1), "\\" + m.group(1)), text)


def _bib_url(url: str) -> str:
    # In a url field only braces and the backslash would break the entry; a URL has none
    # once percent-encoded.
    return url.replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def _site(url: str) -> str:
    return urlsplit(url).hostname or url


def _accessed(doc: Document) -> datetime:
    return datetime.fromtimestamp(doc.created_at or 0, UTC)


def to_bibtex(doc: Document) -> str:
    """The sources as BibTeX ``@misc`` entries (one per source of each part)."""
    day = _accessed(doc)
    out = []
    for key, _, src in _entries(doc):
        fields = [
            f"  title = {{{_bib(src.title or src.url)}}}",
            f"  howpublished = {{\\url{{{_bib_url(src.url)}}}}}",
            f"  url = {{{_bib_url(src.url)}}}",
            f"  organization = {{{_bib(_site(src.url))}}}",
            f"  year = {{{day.year}}}",
            f"  urldate = {{{day.date().isoformat()}}}",
            f"  note = {{{_bib(f'Quarry source [{src.n}] ({src.origin})')}}}",
        ]
        out.append(f"@misc{{{key},\n" + ",\n".join(fields) + "\n}\n")
    return "\n".join(out)


def _ris(tag: str, value: str) -> str:
    return f"{tag}  - {_RIS_LINE.sub(' ', value).strip()}"


def to_ris(doc: Document) -> str:
    """The sources as RIS records (``TY - ELEC``, one per source of each part)."""
    day = _accessed(doc).strftime("%Y/%m/%d")
    records = []
    for key, _, src in _entries(doc):
        lines = [
            _ris("TY", "ELEC"),
            _ris("ID", key),
            _ris("TI", src.title or src.url),
            _ris("UR", src.url),
            _ris("PB", _site(src.url)),
            _ris("Y2", day),
            _ris("N1", f"Quarry source [{src.n}] ({src.origin})"),
            _ris("ER", ""),
        ]
        records.append("\n".join(lines).rstrip() + " \n")
    return "\n".join(records)
