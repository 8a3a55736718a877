"""Is a page a JavaScript shell, whose text only a browser would see? (pure, no I/O)

Measured signals on the raw HTML and the plain extraction: little extracted text, a framework
root node left empty (``<div id="root"></div>``, ``__next``, ``ng-app``, ``<app-root>``…),
``<noscript>`` text asking for JavaScript, and scripts outweighing the visible text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Under this many characters of extracted text a page may be a shell (a real article has more).
THIN_TEXT_CHARS = 500
# Only the head of a page is searched: shells are small, and the scan stays cheap on big pages.
SCAN_BYTES = 256 * 1024

# An empty mount point of a client-side framework (React, Vue, Svelte, Next, Nuxt, Gatsby).
_EMPTY_ROOT = re.compile(
    rb"<(?:div|main|section)[^>]*\bid\s*=\s*[\"']?(?:root|app|__next|__nuxt|___gatsby|svelte|main)"
    rb"[\"']?[^>]*>\s*(?:<!--.*?-->\s*)?</(?:div|main|section)>",
    re.IGNORECASE | re.DOTALL,
)
# Framework markers that need the framework to run before the page has text.
_FRAMEWORK = re.compile(
    rb"\bng-app\b|<app-root\b|\bng-version=|__NEXT_DATA__|window\.__NUXT__|data-reactroot"
    rb"|\bdata-server-rendered\b|<script[^>]+type=[\"']module[\"']",
    re.IGNORECASE,
)
_NOSCRIPT = re.compile(rb"<noscript[^>]*>(.*?)</noscript>", re.IGNORECASE | re.DOTALL)
_NEEDS_JS = re.compile(
    rb"enable\s+javascript|javascript\s+(?:is\s+)?(?:required|disabled|needed)"
    rb"|requires?\s+javascript|turn\s+on\s+javascript|needs?\s+javascript",
    re.IGNORECASE,
)
_SCRIPT = re.compile(rb"<script\b[^>]*>(.*?)</script>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(rb"<[^>]+>")


@dataclass(frozen=True)
class Signals:
    """What was seen; ``reason`` names the signals that fired (logged, sent to the caller)."""

    thin: bool
    empty_root: bool
    framework: bool
    noscript: bool
    script_heavy: bool

    @property
    def shell(self) -> bool:
        """A page worth rendering: thin text plus at least one sign that JS builds it."""
        return self.thin and (
            self.empty_root or self.framework or self.noscript or self.script_heavy
        )

    @property
    def reason(self) -> str:
        names = ("thin", "empty_root", "framework", "noscript", "script_heavy")
        return ",".join(name for name in names if getattr(self, name))


def signals(html: bytes, extracted_chars: int) -> Signals:
    """The shell signals of ``html`` whose plain extraction kept ``extracted_chars`` characters."""
    head = html[:SCAN_BYTES]
    scripts = sum(len(m.group(1)) for m in _SCRIPT.finditer(head))
    visible = len(_TAGS.sub(b"", _SCRIPT.sub(b"", head)).split())
    return Signals(
        thin=extracted_chars < THIN_TEXT_CHARS,
        empty_root=bool(_EMPTY_ROOT.search(head)),
        framework=bool(_FRAMEWORK.search(head)),
        noscript=any(_NEEDS_JS.search(m.group(1)) for m in _NOSCRIPT.finditer(head)),
        # External scripts count too: a page that is mostly <script src> and no words.
        script_heavy=(scripts > 4 * visible or head.lower().count(b"<script") >= 3)
        and visible < 150,
    )
