"""A multipart/form-data body streamed straight into an upload's staging folder.

Starlette's form parser spools every part to a temporary file (outside the upload folder)
before the route sees it, so a 2 GB body would be written whole. Here python-multipart's
streaming parser (the one Starlette uses) is fed the body as it arrives: each file part goes
into :class:`~orchestrator.adapters.corpus.uploads.Incoming`, which refuses it at the size limit;
the
whole body is bounded too, so parts without a file name cannot be used to stream forever.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from orchestrator.adapters.corpus.uploads import Incoming, UnsupportedUpload, UploadTooLarge
from orchestrator.core.errors import DomainError, ErrorKind

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

# Bytes of a body beyond its files: part headers, boundaries, small form fields.
OVERHEAD_BYTES = 64 * 1024


class MalformedUpload(DomainError):
    """The body is not well-formed multipart/form-data."""

    kind = ErrorKind.MALFORMED
    title = "Malformed upload"


def boundary_of(content_type: str, content_encoding: str) -> bytes:
    """The multipart boundary, or UnsupportedUpload for any other body (or an encoded one:
    a gzip body could be a bomb, and no browser compresses a form)."""
    if content_encoding.strip().lower() not in ("", "identity"):
        raise UnsupportedUpload(
            f"Send the files without Content-Encoding (got {content_encoding[:40]!r})."
        )
    media, params = parse_options_header(content_type)
    boundary = params.get(b"boundary", b"")
    if media != b"multipart/form-data" or not boundary or len(boundary) > 200:
        raise UnsupportedUpload("Send the files as multipart/form-data (one part per file).")
    return boundary


class _Parts:
    """The parser's callbacks: headers of each part, then its data into ``incoming``."""

    def __init__(self, incoming: Incoming) -> None:
        self.incoming = incoming
        self.field = b""
        self.value = b""
        self.headers: dict[bytes, bytes] = {}
        self.in_file = False

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self.part_begin,
            "on_header_field": self.header_field,
            "on_header_value": self.header_value,
            "on_header_end": self.header_end,
            "on_headers_finished": self.headers_finished,
            "on_part_data": self.part_data,
            "on_part_end": self.part_end,
        }

    def part_begin(self) -> None:
        self.headers, self.field, self.value, self.in_file = {}, b"", b"", False

    def header_field(self, data: bytes, start: int, end: int) -> None:
        self.field += data[start:end]

    def header_value(self, data: bytes, start: int, end: int) -> None:
        self.value += data[start:end]

    def header_end(self) -> None:
        self.headers[self.field.lower()] = self.value
        self.field, self.value = b"", b""

    def headers_finished(self) -> None:
        _, params = parse_options_header(self.headers.get(b"content-disposition", b""))
        if b"filename" in params:
            # A form part without a file name (a text field) is read and ignored.
            self.incoming.begin(params[b"filename"].decode("utf-8", "replace"))
            self.in_file = True

    def part_data(self, data: bytes, start: int, end: int) -> None:
        if self.in_file:
            self.incoming.write(data[start:end])

    def part_end(self) -> None:
        if self.in_file:
            self.incoming.end()
            self.in_file = False


async def receive_files(
    body: AsyncIterator[bytes], boundary: bytes, incoming: Incoming, max_total: int
) -> None:
    """Stream ``body`` into ``incoming``; UploadTooLarge once it passes ``max_total`` bytes
    (whatever its Content-Length said), MalformedUpload when it is not multipart."""
    parts = _Parts(incoming)
    parser = MultipartParser(boundary, parts.callbacks())
    seen = 0
    try:
        async for chunk in body:
            seen += len(chunk)
            if seen > max_total:
                raise UploadTooLarge(
                    f"The upload is larger than {max_total} bytes "
                    "(ORCHESTRATOR_UPLOAD_MAX_BYTES per file, ORCHESTRATOR_UPLOAD_MAX_FILES)."
                )
            parser.write(chunk)
        parser.finalize()
    except MultipartParseError as err:
        raise MalformedUpload(f"The body is not valid multipart/form-data ({err}).") from None
    if parts.in_file:
        raise MalformedUpload("The body ended inside a file part.")
