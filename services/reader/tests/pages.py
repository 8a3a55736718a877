"""Test pages and a loopback HTTP server that misbehaves on purpose (asyncio streams)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import ssl
import zlib
from collections.abc import Awaitable, Callable

PARAGRAPHS = [
    "The harbour at Veldmark was rebuilt in 1893 after the great storm destroyed the old "
    "timber quays, and the new stone breakwater still shelters the fishing fleet today.",
    "Engineers chose granite from the northern quarries because it resisted the salt spray, "
    "and the blocks were carried down the valley on a narrow-gauge railway built for the job.",
    "Local records show that more than four hundred workers lived in temporary barracks "
    "near the shore during the three years of construction, many of them seasonal farmhands.",
    "Today the breakwater is a protected monument, and a small museum in the old harbour "
    "master's house tells the story of the storm and the reconstruction with photographs.",
]

ARTICLE = (
    "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
    "<title>The Veldmark breakwater | Coastal History</title>"
    "<meta property='og:site_name' content='Coastal History'>"
    "<meta name='date' content='2021-03-04'></head><body>"
    "<nav><ul><li><a href='/'>Home</a></li><li><a href='/about'>About us</a></li></ul></nav>"
    "<article><h1>The Veldmark breakwater</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    + "<table><tr><th>Year</th><th>Event</th></tr><tr><td>1893</td><td>Rebuilt</td></tr></table>"
    "</article><footer>Copyright 2021 Coastal History. All rights reserved.</footer>"
    "</body></html>"
).encode()

# An article whose structure the precision pass alone loses: a lead list, self-linked section
# headings, an ordered list, a code block, a table, a closing list; then a related-links box.
STRUCTURED_PARAGRAPHS = [
    "The Veldmark tide gauge records the water level every six minutes, and the archive keeps "
    "each reading since 1893.",
    "The logger is a small sealed box that runs for a year on one battery and speaks to the "
    "office over a radio link.",
    "Exports are plain CSV files, one row per reading, so any spreadsheet or script can read "
    "them without a plug-in.",
    "Corrections never overwrite a reading: they are stored beside it with the name of the "
    "person who made them.",
]
STRUCTURED = (
    "<html><head><title>Reading the Veldmark tide gauge | Coastal Notes</title></head><body>"
    "<nav><ul><li><a href='/'>Home</a></li><li><a href='/archive'>Archive</a></li></ul></nav>"
    "<div class='layout'><div class='c-7'><h1>Reading the Veldmark tide gauge</h1>"
    "<ul><li>Readings every six minutes since 1893.</li><li>Exports as plain CSV files.</li></ul>"
    f"<p>{STRUCTURED_PARAGRAPHS[0]}</p>"
    "<h2 id='install'><a href='#install'>Installing the logger</a></h2>"
    f"<p>{STRUCTURED_PARAGRAPHS[1]}</p>"
    "<ol><li>Unpack the logger and charge its battery overnight.</li>"
    "<li>Mount it on the stilling well above the spring high tide.</li></ol>"
    "<h2 id='archive'><a href='#archive'>Reading the archive</a></h2>"
    f"<p>{STRUCTURED_PARAGRAPHS[2]}</p>"
    "<pre><code>gauge export --from 1893 --format csv &gt; levels.csv\n"
    "wc -l levels.csv</code></pre>"
    "<table><tr><th>Column</th><th>Meaning</th></tr><tr><td>ts</td><td>UTC time</td></tr>"
    "<tr><td>level</td><td>Water level in millimetres</td></tr></table>"
    f"<p>{STRUCTURED_PARAGRAPHS[3]}</p>"
    "<ul><li>Readings are never edited in place.</li>"
    "<li>Corrections are stored beside the reading they amend.</li></ul></div></div>"
    "<section class='related'><h3>Related articles</h3><ul><li><a href='/walks'>Ten harbour "
    "walks</a></li><li><a href='/storm'>The storm of 1953</a></li></ul></section>"
    "<footer><p>Copyright Coastal Notes. All rights reserved.</p></footer></body></html>"
)

# A reference page in the style of Apache httpd's module docs: a definition list whose entries
# hold code, links and a code block; the precision pass alone garbles it and drops sentences.
REFERENCE_FACTS = [
    "the application is expected to authenticate the client using the provided user id",
    "the application is expected to authorize the client using the provided user id",
]
REFERENCE = (
    "<html><head><title>mod_authnz_fcgi</title></head><body><div id='page-content'>"
    "<h1>Apache Module mod_authnz_fcgi</h1><p>"
    + "The module hands authentication to an external FastCGI application. "
    * 3
    + "</p><h2>Invocation modes</h2><dl><dt><em>Type</em> <code>authn</code></dt><dd>In this "
    "mode <code>FCGI_ROLE</code> is set to <code>AUTHORIZER</code>. The application must be "
    "defined using <code><a href='#define'>AuthnzFcgiDefineProvider</a></code> and enabled "
    "with <code><a href='../basic.html#p'>AuthBasicProvider</a></code>. When invoked, "
    f"{REFERENCE_FACTS[0]} and password. Example:<pre>#!/usr/bin/perl\nuse FCGI;</pre></dd>"
    "<dt><em>Type</em> <code>authz</code></dt><dd>In this mode the application must be defined "
    "using <code><a href='#define'>AuthnzFcgiDefineProvider</a></code>. When invoked, "
    f"{REFERENCE_FACTS[1]} and other request data.</dd></dl><p>"
    + "Each provider runs in its own process and is restarted when it exits. " * 3
    + "</p></div></body></html>"
)

JS_SHELL = (
    b"<!DOCTYPE html><html><head><title>App</title><script src='/app.js'></script></head>"
    b"<body><div id='root'></div></body></html>"
)

CAFE_TEXT = "Le café de la gare sert un crème brûlée très apprécié des habitués du quartier. "


def charset_page(text: str) -> str:
    """An HTML page whose main text is ``text`` repeated (no charset declared inside)."""
    body = "".join(f"<p>{text * 3}</p>" for _ in range(4))
    return f"<html><head><title>Café</title></head><body><article>{body}</article></body></html>"


def nested_page(depth: int = 20_000) -> bytes:
    """A DOM nested far deeper than parsers allow."""
    return ("<div>" * depth + "<p>deep text</p>" + "</div>" * depth).encode()


def slow_page(items: int = 40_000) -> bytes:
    """A huge list page that takes Trafilatura seconds (about 1.7 MB per 20k items)."""
    lis = "".join(
        f"<li><a href='/p{i}'>Item {i} link text</a><ul><li>sub {i} words</li></ul></li>"
        for i in range(items)
    )
    return f"<html><body><nav><ul>{lis}</ul></nav></body></html>".encode()


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(lines: list[str], title: str = "Test PDF") -> bytes:
    """A minimal valid one-page PDF with a text layer and a /Title."""
    ops = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({_pdf_escape(x)}) '" for x in lines)
    stream = (ops + " ET").encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Title ("
        + _pdf_escape(title).encode("latin-1")
        + b") /CreationDate (D:20240305101500+01'00') >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


PDF_LINES = ["Quarterly report on tidal measurements.", "Mean high water rose by 4 mm."]

Writer = asyncio.StreamWriter
Handler = Callable[[Writer], Awaitable[None]]


def _head(status: str, headers: dict[str, str], length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def fixed(
    body: bytes, content_type: str | None = "text/html; charset=utf-8", **extra: str
) -> Handler:
    """A handler answering 200 with ``body``."""
    headers = dict(extra)
    if content_type is not None:
        headers["Content-Type"] = content_type

    async def handle(writer: Writer) -> None:
        writer.write(_head("200 OK", headers, len(body)) + body)
        await writer.drain()

    return handle


def status(code: int, reason: str, location: str | None = None) -> Handler:
    """A handler answering ``code`` (with a Location when given)."""
    headers = {"Content-Type": "text/html"} | ({"Location": location} if location else {})

    async def handle(writer: Writer) -> None:
        writer.write(_head(f"{code} {reason}", headers, 0))
        await writer.drain()

    return handle


def endless(
    chunk: bytes, content_type: str = "text/html; charset=utf-8", delay: float = 0.0
) -> Handler:
    """A handler that streams ``chunk`` forever (no length) until the client goes away."""

    async def handle(writer: Writer) -> None:
        writer.write(_head("200 OK", {"Content-Type": content_type}, None))
        while True:
            writer.write(chunk)
            await writer.drain()
            if delay:
                await asyncio.sleep(delay)

    return handle


def cut_short(prefix: bytes, *, stall: bool) -> Handler:
    """Promise 3x ``prefix`` bytes, send ``prefix``, then stall (or drop the connection)."""

    async def handle(writer: Writer) -> None:
        head = _head("200 OK", {"Content-Type": "text/html; charset=utf-8"}, 3 * len(prefix))
        writer.write(head + prefix)
        await writer.drain()
        if stall:
            await asyncio.sleep(60)

    return handle


def long_article(paragraphs: int = 150) -> bytes:
    """An article page of roughly 30 KB that is open-ended (no closing tags)."""
    body = "".join(f"<p>{PARAGRAPHS[i % len(PARAGRAPHS)]} ({i})</p>" for i in range(paragraphs))
    return f"<html><head><title>Long</title></head><body><article>{body}".encode()


def gzip_bomb(decoded_mb: int = 16) -> bytes:
    """An HTML page that inflates to ``decoded_mb`` MB (about 1000:1)."""
    raw = b"<html><body><p>" + b" " * (decoded_mb * 1024 * 1024) + b"</p></body></html>"
    return gzip.compress(raw, compresslevel=9)


def deflated(body: bytes) -> bytes:
    """``body`` in the zlib-wrapped deflate encoding."""
    return zlib.compress(body)


class HttpServer:
    """A loopback HTTP/1.1 server: path -> handler; each connection serves one request."""

    def __init__(self, routes: dict[str, Handler], tls: ssl.SSLContext | None = None) -> None:
        self.routes = routes
        self._tls = tls
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._server: asyncio.Server | None = None
        self.port = 0
        self.bind = "127.0.0.1"

    async def __aenter__(self) -> HttpServer:
        self._server = await asyncio.start_server(self._serve, self.bind, 0, ssl=self._tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The URL of ``path`` on this server."""
        scheme = "https" if self._tls else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        try:
            request = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            line, *header_lines = request.split("\r\n")
            path = line.split(" ")[1]
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (h.partition(":") for h in header_lines if h)
            }
            self.requests.append((path, headers))
            handler = self.routes.get(path, status(404, "Not Found"))
            await handler(writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
