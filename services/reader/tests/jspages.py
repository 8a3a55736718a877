"""Pages whose text only JavaScript writes, friendly and hostile, for the render tier's tests,
its bench and the eval's JS-only set."""

from __future__ import annotations

import asyncio

from services.reader.tests.pages import Handler, Writer, fixed, status

TIDE_FACT = "The Veldmark tide gauge records a mean tidal range of 3.2 metres at the outer mole."
APP_TEXT = (
    TIDE_FACT
    + " The gauge was installed by the harbour board in 1911 and rebuilt after the storm of 1953."
    + " Readings are taken every six minutes and published in the harbour almanac each spring."
)


def shell(script: str, title: str = "Veldmark harbour") -> bytes:
    """A JS shell: an empty React-style root and one deferred script that fills it."""
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>"
        f"<script defer src='{script}'></script></head>"
        "<body><div id='root'></div><noscript>You need to enable JavaScript to run this app."
        "</noscript></body></html>"
    ).encode()


def article_js(text: str = APP_TEXT, heading: str = "Tides at Veldmark") -> bytes:
    """A script that writes an article (heading + paragraphs) into #root."""
    paragraphs = "".join(f"<p>{text} ({n})</p>" for n in range(1, 7))
    return (
        "document.getElementById('root').innerHTML = "
        f"{('<article><h1>' + heading + '</h1>' + paragraphs + '</article>')!r};"
    ).encode()


def hostile_js(canary_port: int) -> bytes:
    """The article, plus attempts on loopback, a private address, file: and a redirect."""
    return (
        article_js()
        + (
            f"fetch('http://127.0.0.1:{canary_port}/secret').catch(() => {{}});"
            "fetch('http://10.0.0.7/admin').catch(() => {});"
            "var f = document.createElement('iframe'); f.src = 'file:///etc/passwd';"
            "document.body.appendChild(f);"
            "var s = document.createElement('script'); s.src = '/to-private';"
            "document.body.appendChild(s);"
        ).encode()
    )


FERRY_FACT = "The first Marrow Sound ferry leaves Veldhaven at 05:40 on weekdays."


def xhr_shell(data: str) -> bytes:
    """A single-page app: an inline script fetches the content as JSON, then writes it. The
    JSON is served as text/html (as careless servers do): its reply then reaches the page a
    little later, which made the render tier snapshot the empty root before it landed."""
    script = (
        f"fetch('{data}').then(function (r) {{ return r.json(); }}).then(function (d) {{"
        " document.getElementById('root').innerHTML = '<article><h1>' + d.title + '</h1>'"
        " + d.paragraphs.map(function (p) { return '<p>' + p + '</p>'; }).join('')"
        " + '</article>'; });"
    )
    return (
        "<!DOCTYPE html><html><head><title>Ferry</title></head><body><div id='root'></div>"
        f"<script>{script}</script></body></html>"
    ).encode()


XHR_DATA = (
    '{"title": "Marrow Sound ferry", "paragraphs": ['
    + ", ".join(f'"{FERRY_FACT} ({n})"' for n in range(1, 7))
    + "]}"
).encode()

HOG_JS = b"var hoard = []; while (true) { hoard.push(new Array(1 << 20).fill(7)); }"
FRAMES_JS = (
    b"var n = 0; setInterval(function () { for (var i = 0; i < 20; i++) {"
    b" var f = document.createElement('iframe'); f.src = '/frame?' + (n++);"
    b" document.body.appendChild(f); } }, 5);"
)


# Far longer than a tight render (4 s), short enough to end before the test module does.
STALL_S = 20.0


def stalled(first: bytes = b"") -> Handler:
    """Headers and maybe a few bytes, then nothing for ``STALL_S``."""

    async def handle(writer: Writer) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/javascript\r\n\r\n" + first)
        await writer.drain()
        await asyncio.sleep(STALL_S)

    return handle


def js_routes(canary_port: int, private_url: str) -> dict[str, Handler]:
    """The render tier's fixture site."""
    js = "application/javascript"
    return {
        "/app": fixed(shell("/app.js")),
        "/app.js": fixed(article_js(), js),
        "/hostile": fixed(shell("/hostile.js")),
        "/hostile.js": fixed(hostile_js(canary_port), js),
        "/to-private": status(302, "Found", private_url),
        "/never": fixed(shell("/never.js")),
        "/never.js": stalled(b"//"),
        "/hog": fixed(shell("/hog.js")),
        "/hog.js": fixed(HOG_JS, js),
        "/frames": fixed(shell("/frames.js")),
        "/frames.js": fixed(FRAMES_JS, js),
        "/frame": fixed(b"<html><body><p>frame</p></body></html>"),
        "/spa": fixed(xhr_shell("/spa.json")),
        "/spa.json": fixed(XHR_DATA),
    }
