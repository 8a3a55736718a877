"""A real metasearch engine on 127.0.0.1: Debian's `searx` (SearXNG's predecessor, same
`/search?format=json` API) with no upstream engines, only its offline `sqlite` engine over an
FTS5 table of local pages.

Each indexed page has a body (what the engine matches) and an optional fixed summary. A result's
snippet is that summary, or else FTS5's own ``snippet()``: the 40 words of the body that best
match the query, as a real engine shows the query's context.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

SYSTEM_PYTHON = "/usr/bin/python3"
EXAMPLE_SETTINGS = Path("/usr/share/doc/searx/examples/settings.yml")
INSTALL_HINT = "Debian's searx is missing: apt-get install -y searx (`make test` as root does it)"
RESULTS = 10

# Words too common to search for, dropped as real engines do: with them every page matched and
# FTS5's snippet() of a big page took seconds (every "the" is a candidate window).
_STOP_TEXT = (
    "the and for are was were what which who whom how when where why does did can could with "
    "from that this these those into its has have had not but all any you your there their "
    "than then them they also such per via each other some most more will would should may "
    "might must been being about over under between only same very own our his her she him one"
)
STOPWORDS = frozenset(_STOP_TEXT.split())

# FTS5 MATCH rejects punctuation and operators in free text, so the query is split into words
# (a recursive CTE: searx only runs statements that start with SELECT, hence the subquery),
# each word quoted as a phrase and OR-ed; a query with no word of 3+ letters (stop-words aside)
# matches nothing.
_MATCH = (
    "(SELECT coalesce(group_concat('\"' || w || '\"', ' OR '), '\"qqqqnomatch\"') FROM ("  # noqa: S608
    "WITH RECURSIVE s(w, rest) AS (SELECT '', :query || ' ' UNION ALL "
    "SELECT substr(rest, 1, instr(rest, ' ') - 1), substr(rest, instr(rest, ' ') + 1) "
    "FROM s WHERE rest <> '') "
    "SELECT replace(replace(w, '\"', ''), '''', '') AS w FROM s WHERE length(w) > 2 "
    "AND lower(w) NOT IN (" + ", ".join(f"'{w}'" for w in sorted(STOPWORDS)) + ")))"
)
QUERY_STR = (
    "SELECT url, title, CASE WHEN summary <> '' THEN summary "
    "ELSE snippet(pages, 2, '', '', '…', 40) END AS content "
    "FROM pages WHERE pages MATCH " + _MATCH + " ORDER BY rank"
)


@dataclass(frozen=True)
class Entry:
    """One indexed page: its URL, title, matched body and (optional) fixed snippet."""

    url: str
    title: str
    body: str
    summary: str = ""


@dataclass(frozen=True)
class Hit:
    """One result as the engine returns it."""

    url: str
    title: str
    content: str


def searx_available() -> str | None:
    """Return why searx cannot run here, or None when it can."""
    if not Path(SYSTEM_PYTHON).exists() or not EXAMPLE_SETTINGS.exists():
        return INSTALL_HINT
    probe = subprocess.run(
        # find_spec, not import: importing searx loads (and insists on) a settings file.
        [
            SYSTEM_PYTHON,
            "-c",
            "import importlib.util as u, sys; sys.exit(not u.find_spec('searx'))",
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return None if probe.returncode == 0 else INSTALL_HINT


def build_index(db: Path, entries: Sequence[Entry]) -> None:
    """Write the FTS5 table (url, title, body, summary) the engine searches."""
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE VIRTUAL TABLE pages USING fts5(url, title, body, summary UNINDEXED)")
        conn.executemany(
            "INSERT INTO pages VALUES (?, ?, ?, ?)",
            [(e.url, e.title, e.body, e.summary) for e in entries],
        )


def search_index(db: Path, query: str, limit: int = RESULTS) -> list[Hit]:
    """What the engine answers for ``query`` (its first page), without running searx."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(f"{QUERY_STR} LIMIT {int(limit)}", {"query": query}).fetchall()
    return [Hit(str(u), str(t), str(c)) for u, t, c in rows]


def write_settings(path: Path, db: Path, port: int, timeout_s: float = 3.0) -> None:
    """Full searx settings (Debian ships no defaults to inherit) with one sqlite engine."""
    settings = yaml.safe_load(EXAMPLE_SETTINGS.read_text())
    settings.pop("use_default_settings", None)
    settings["search"]["formats"] = ["html", "json"]
    # A throwaway instance on loopback for one run: the key protects nothing.
    secret = "offline-only-" + str(port)
    settings["server"].update(
        port=port, bind_address="127.0.0.1", secret_key=secret, image_proxy=False
    )
    settings["outgoing"]["request_timeout"] = timeout_s
    settings["engines"] = [
        {
            "name": "fixtures",
            "engine": "sqlite",
            "shortcut": "fx",
            "categories": "general",
            "database": str(db),
            "query_str": QUERY_STR,
            "limit": RESULTS,
        }
    ]
    path.write_text(yaml.safe_dump(settings))


@contextmanager
def run_searx(
    workdir: Path, entries: Sequence[Entry], port: int, timeout_s: float = 3.0
) -> Iterator[str]:
    """Run searx on ``port`` over ``entries``; yield its base URL.

    ``timeout_s`` is searx's wait for its engine (a busy 2-core machine needs more for big pages).
    """
    db = workdir / "pages.db"
    settings = workdir / "settings.yml"
    build_index(db, entries)
    write_settings(settings, db, port, timeout_s)
    log = (workdir / "searx.log").open("wb")
    proc = subprocess.Popen(
        [SYSTEM_PYTHON, "-m", "searx.webapp"],
        env={"SEARX_SETTINGS_PATH": str(settings), "PATH": "/usr/bin:/bin"},
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, proc)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_ready(base: str, proc: subprocess.Popen[bytes], deadline_s: float = 60) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"searx exited with {proc.returncode}")
        try:
            if httpx.get(f"{base}/search", params={"q": "ready", "format": "json"}).is_success:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("searx did not answer in time")


def which_searx() -> str | None:
    """Path of the searx launcher, if the package is installed (for messages)."""
    return shutil.which("searx-run")
