"""The offline web `make eval` asks about: real third-party HTML doc sets from Debian packages
(all in Debian main), served as they are on 127.0.0.1 and indexed in searx (tests/offline).

Two roles. The *tuning* sets are the ones retrieval was developed against: SQLite's
documentation (sqlite3-doc) and Git's manual pages and guides (git-doc), prose pages dense
with facts. The *held-out* sets are of another style, long reference pages with many short
entries, and nobody tunes on them: Apache httpd's module reference (apache2-doc: one page per
module, each a run of configuration directives with their syntax/default/context tables) and
FFmpeg's manuals (ffmpeg-doc: command-line, codec, format and filter options as long
definition lists). Only the top-level pages of each folder are served; FFmpeg's ``*-all.html``
concatenations (every manual in one page) are left out, as a site would not index them twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import lxml.html

from tests.conftest import ROOT
from tests.offline.searx import Entry
from tests.offline.web import Route, directory_route

Role = Literal["tuning", "held-out"]
ROLES: tuple[Role, ...] = ("tuning", "held-out")


@dataclass(frozen=True)
class DocSet:
    """One doc set: its URL prefix, where its Debian package puts the HTML, and its role."""

    name: str
    folder: Path
    package: str
    role: Role
    # File names (glob patterns) in ``folder`` that are not served.
    exclude: tuple[str, ...] = ()

    def files(self) -> list[Path]:
        """The served HTML files of this set."""
        skipped = {f for pattern in self.exclude for f in self.folder.glob(pattern)}
        return [f for f in self.folder.glob("*.html") if f not in skipped]


SETS: tuple[DocSet, ...] = (
    DocSet("sqlite", Path("/usr/share/doc/sqlite3"), "sqlite3-doc", "tuning"),
    DocSet("git", Path("/usr/share/doc/git-doc"), "git-doc", "tuning"),
    DocSet("postfix", Path("/usr/share/doc/postfix/html"), "postfix-doc", "tuning"),
    DocSet("zsh", Path("/usr/share/doc/zsh-common/html"), "zsh-doc", "tuning"),
    DocSet("apache", Path("/usr/share/doc/apache2-doc/manual/en/mod"), "apache2-doc", "held-out"),
    DocSet(
        "ffmpeg", Path("/usr/share/doc/ffmpeg/manual"), "ffmpeg-doc", "held-out", ("*-all.html",)
    ),
)
BY_NAME: Mapping[str, DocSet] = {s.name: s for s in SETS}
# URL prefix -> where the Debian package puts its HTML.
DOC_SETS = {s.name: s.folder for s in SETS}
PACKAGES = {s.name: s.package for s in SETS}
INSTALL_HINT = (
    "the eval doc sets are missing: apt-get install -y "
    + " ".join(s.package for s in SETS)
    + " (`make test` as root installs them: scripts/system-packages.sh)"
)


def role_of(set_name: str) -> Role:
    """Whether the set ``set_name`` is tuned on or held out."""
    return BY_NAME[set_name].role


@dataclass(frozen=True)
class DocPage:
    """One served page: its URL path and its file."""

    path: str
    file: Path


def docs_available() -> str | None:
    """Why the doc sets cannot be served here, or None when they can."""
    ok = all(s.folder.is_dir() and any(s.folder.glob("*.html")) for s in SETS)
    return None if ok else INSTALL_HINT


def pages() -> list[DocPage]:
    """Every served page, sorted by path."""
    found = [DocPage(f"/{s.name}/{file.name}", file) for s in SETS for file in s.files()]
    return sorted(found, key=lambda p: p.path)


def route() -> Route:
    """The web server's route table over the doc sets (excluded files are not found)."""
    served = {p.path for p in pages()}
    inner = directory_route(DOC_SETS)

    def serve(path: str) -> bytes | None:
        return inner(path) if path in served else None

    return serve


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


def local_corpus(root: Path = ROOT) -> dict[str, str]:
    """The local corpus of the off-topic questions: Quarry's README.md and docs/ text files
    (what `make run` indexes when no search engine answers), by path relative to ``root``."""
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return {str(f.relative_to(root)): f.read_text("utf-8") for f in files if f.is_file()}
