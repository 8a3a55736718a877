"""Files the documents tests upload and index: a PDF of several pages, a PDF bomb, a zip bomb,
and a multipart body builder (the wire format a browser sends)."""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Sequence

from services.reader.tests.pages import _pdf_escape

BOUNDARY = "----quarry-test-boundary-7d93"


def paged_pdf(pages: Sequence[Sequence[str]], title: str = "Paged PDF") -> bytes:
    """A valid PDF with one page per entry of ``pages`` (each a list of text lines)."""
    n = len(pages)
    font = 3 + 2 * n
    info = font + 1
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode(),
    ]
    for i, lines in enumerate(pages):
        ops = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({_pdf_escape(x)}) '" for x in lines)
        stream = (ops + " ET").encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
            f"/F1 {font} 0 R >> >> /Contents {4 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(b"<< /Title (" + _pdf_escape(title).encode("latin-1") + b") >>")
    return _assemble(objects, info)


def pdf_bomb(megabytes: int = 100) -> bytes:
    """A one-page PDF whose content stream inflates from ~200 KB to ``megabytes`` MB."""
    squeeze = zlib.compressobj(9)
    block = b"0" * (1 << 20)
    data = b"".join(squeeze.compress(block) for _ in range(megabytes)) + squeeze.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
        b"<< /Title (bomb) >>",
    ]
    return _assemble(objects, 5)


def _assemble(objects: list[bytes], info: int) -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\n" % (len(objects) + 1, info)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def zip_bomb(megabytes: int = 100) -> bytes:
    """A small zip holding one file of ``megabytes`` MB of zeros."""
    buf = io.BytesIO()
    block = b"\0" * (1 << 20)
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z,
        z.open("zeros.txt", "w", force_zip64=True) as f,
    ):
        for _ in range(megabytes):
            f.write(block)
    return buf.getvalue()


def multipart(files: Sequence[tuple[str, bytes]], field: str = "file") -> tuple[bytes, str]:
    """A multipart/form-data body holding ``files`` (name, bytes), and its content type."""
    out = bytearray()
    for name, data in files:
        out += f"--{BOUNDARY}\r\n".encode()
        out += (
            f'Content-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        out += data + b"\r\n"
    out += f"--{BOUNDARY}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={BOUNDARY}"
