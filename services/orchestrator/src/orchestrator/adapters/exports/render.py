"""Every export format of a document, by name: media types, file extensions, the dispatch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from orchestrator.adapters.exports.pdf import PdfFailed, PdfRenderer
from orchestrator.core.errors import DomainError, ErrorKind
from orchestrator.core.exports.document import Document
from orchestrator.core.exports.formats import to_bibtex, to_json, to_ris
from orchestrator.core.exports.html import to_html

ExportFormat = Literal["md", "html", "pdf", "json", "bibtex", "ris"]
FORMAT_NAMES: tuple[str, ...] = get_args(ExportFormat)


@dataclass(frozen=True)
class Format:
    """A format's media type and file extension."""

    media_type: str
    extension: str


FORMATS: dict[str, Format] = {
    "md": Format("text/markdown; charset=utf-8", "md"),
    "html": Format("text/html; charset=utf-8", "html"),
    "pdf": Format("application/pdf", "pdf"),
    "json": Format("application/json", "json"),
    "bibtex": Format("application/x-bibtex; charset=utf-8", "bib"),
    "ris": Format("application/x-research-info-systems; charset=utf-8", "ris"),
}
#: A file name's extension → the format it asks for (``quarry … -o report.pdf``).
BY_EXTENSION: dict[str, str] = {
    "md": "md",
    "markdown": "md",
    "txt": "md",
    "html": "html",
    "htm": "html",
    "pdf": "pdf",
    "json": "json",
    "bib": "bibtex",
    "bibtex": "bibtex",
    "ris": "ris",
}


class ExportFailed(DomainError):
    """The export could not be made (Chromium missing, failing or too slow for a PDF)."""

    kind = ErrorKind.UNAVAILABLE
    title = "Export failed"


class TurnNotFound(DomainError):
    """``turn`` names no turn of the session."""

    kind = ErrorKind.NOT_FOUND
    title = "Turn not found"


async def export(doc: Document, fmt: str, pdf: PdfRenderer) -> bytes:
    """``doc`` in format ``fmt`` (one of ``FORMATS``).

    Raises:
        ExportFailed: the PDF could not be printed.
    """
    if fmt == "md":
        return doc.markdown.encode()
    if fmt == "html":
        return to_html(doc).encode()
    if fmt == "pdf":
        try:
            return await pdf.render(to_html(doc))
        except PdfFailed as err:
            raise ExportFailed(f"The PDF could not be made: {err}") from None
    if fmt == "json":
        return to_json(doc)
    if fmt == "bibtex":
        return to_bibtex(doc).encode()
    if fmt == "ris":
        return to_ris(doc).encode()
    raise ValueError(fmt)  # the routes accept only FORMATS
