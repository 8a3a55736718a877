"""PDF by the Chromium the project already uses (Debian's ``/usr/bin/chromium``), headless,
``--print-to-pdf`` from a local file, with networking shut off.

Why the command line and not Playwright: Playwright is a test dependency only, and printing
one local file needs no browser session. The page numbers come from the HTML's own print CSS
(``@page`` margin boxes, Chromium ≥ 131), so Chromium's header and footer — which would print
the temporary file's path — are off. Links stay clickable: Chromium writes a link annotation
for every ``<a href>``, internal ones (a citation to its source) as jumps within the file.

Chromium must not reach the network, whatever the HTML holds: the page's
Content-Security-Policy forbids every fetch, every host name resolves to nothing
(``--host-resolver-rules``), and every connection goes to a closed proxy on 127.0.0.1 port 9
(``--proxy-server``, loopback not bypassed). Each render gets a fresh profile directory in a
temporary directory that is removed afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

NO_NETWORK_FLAGS = (
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
)


class PdfFailed(Exception):
    """Chromium is missing, failed or took too long."""


def chromium_args(chromium: str, html_file: Path, pdf_file: Path, profile: Path) -> list[str]:
    """The command line that prints ``html_file`` to ``pdf_file`` with no network."""
    return [
        chromium,
        "--headless",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        # Root (containers, CI) cannot use Chromium's sandbox; the page is our own
        # sanitised, script-free HTML with every fetch blocked.
        *(["--no-sandbox"] if os.geteuid() == 0 else []),
        f"--user-data-dir={profile}",
        *NO_NETWORK_FLAGS,
        "--no-pdf-header-footer",
        f"--print-to-pdf={pdf_file}",
        html_file.as_uri(),
    ]


class PdfRenderer:
    """Prints HTML to PDF with Chromium, at most ``concurrency`` at a time (each is a browser)."""

    def __init__(self, chromium: str, timeout_s: float, concurrency: int = 1) -> None:
        self.chromium = chromium
        self.timeout_s = timeout_s
        self._slots = asyncio.Semaphore(concurrency)

    async def render(self, html: str) -> bytes:
        """The PDF of ``html``.

        Raises:
            PdfFailed: Chromium is missing, exited with an error, wrote nothing or timed out.
        """
        if not await asyncio.to_thread(Path(self.chromium).is_file):
            raise PdfFailed(f"Chromium is not installed at {self.chromium}.")
        async with self._slots:
            with tempfile.TemporaryDirectory(prefix="quarry-pdf-") as tmp:
                return await self._render_in(Path(tmp), html)

    async def _render_in(self, tmp: Path, html: str) -> bytes:
        html_file, pdf_file = tmp / "export.html", tmp / "export.pdf"
        await asyncio.to_thread(html_file.write_text, html, "utf-8")
        proc = await asyncio.create_subprocess_exec(
            *chromium_args(self.chromium, html_file, pdf_file, tmp / "profile"),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its helpers go with it when the group is killed
        )
        try:
            async with asyncio.timeout(self.timeout_s):
                _, err = await proc.communicate()
        except TimeoutError:
            raise PdfFailed(f"Chromium took longer than {self.timeout_s:g} s.") from None
        finally:
            # A timeout, a cancelled request or helpers outliving the browser: no process of
            # the render is left behind.
            _kill_group(proc.pid)
            if proc.returncode is None:
                await proc.wait()
        if proc.returncode != 0 or not pdf_file.is_file():
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] if err else []
            logger.warning("chromium failed", extra={"code": proc.returncode, "stderr": tail})
            raise PdfFailed(f"Chromium exited with status {proc.returncode}.")
        return await asyncio.to_thread(pdf_file.read_bytes)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, 9)
