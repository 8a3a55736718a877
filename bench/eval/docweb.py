"""The offline web `make eval` asks about: two real third-party HTML doc sets from Debian
packages, served as they are on 127.0.0.1 and indexed in searx (tests/offline).

SQLite's documentation (sqlite3-doc) and Git's manual pages and guides (git-doc): both are
dense with facts (limits, defaults, versions, options), well structured, and written by others,
so the reader and the passages face real page layouts. Only the top-level pages are served
(~420): sub-folders such as SQLite's per-function C API pages are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import lxml.html

from tests.offline.searx import Entry
from tests.offline.web import Route, directory_route

# URL prefix -> where the Debian package puts its HTML.
DOC_SETS = {"sqlite": Path("/usr/share/doc/sqlite3"), "git": Path("/usr/share/doc/git-doc")}
PACKAGES = {"sqlite": "sqlite3-doc", "git": "git-doc"}
INSTALL_HINT = (
    "the eval doc sets are missing: apt-get install -y sqlite3-doc git-doc "
    "(`make test` as root installs them: scripts/system-packages.sh)"
)


@dataclass(frozen=True)
class DocPage:
    """One served page: its URL path and its file."""

    path: str
    file: Path


def docs_available() -> str | None:
    """Why the doc sets cannot be served here, or None when they can."""
    ok = all(any(d.glob("*.html")) for d in DOC_SETS.values() if d.is_dir())
    return None if ok and all(d.is_dir() for d in DOC_SETS.values()) else INSTALL_HINT


def pages() -> list[DocPage]:
    """Every served page, sorted by path."""
    found = [
        DocPage(f"/{name}/{file.name}", file)
        for name, folder in DOC_SETS.items()
        for file in folder.glob("*.html")
    ]
    return sorted(found, key=lambda p: p.path)


def route() -> Route:
    """The web server's route table over the doc sets."""
    return directory_route(DOC_SETS)


def page_text(html: bytes) -> tuple[str, str]:
    """Title and whole visible text of a page: what a search engine indexes (not the reader's
    main-content extraction, which drops navigation and boilerplate)."""
    tree = lxml.html.fromstring(html)
    title = " ".join((tree.findtext(".//title") or "").split())
    for node in tree.xpath("//script|//style|//svg"):
        node.drop_tree()
    return title, " ".join(tree.text_content().split())


def entries(base_url: str) -> list[Entry]:
    """The search index rows of every page at ``base_url``."""
    rows = []
    for page in pages():
        title, text = page_text(page.file.read_bytes())
        rows.append(Entry(base_url + page.path, title or page.path, text))
    return rows
