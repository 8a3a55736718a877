"""The JS-only question set of `make eval`: pages whose text exists only after JavaScript runs,
asked with the reader's render tier on (``READER_RENDER=on-demand``, the default) and off.

The site (``/js/``) is a handful of single-page apps, as many documentation, timetable and
catalogue sites are built: the served HTML is a shell (a title, a meta description, an empty
``<div id="root">`` and a ``<noscript>`` line) whose inline script fetches the page's content
as JSON (``/js/<name>.json``) and writes it into the root. Nothing links to the JSON, and the
shell holds none of it, so a plain read of a page comes back empty.

The search engine is one that renders pages before indexing them, as the big ones do: it
matches the query on the page's rendered text, and shows the meta description as the snippet.
Every question is ``deep``: its answer is in the rendered text, never in the snippet or the
shell, so only the render tier can bring it to the model (proven by :func:`check`).

    python -m bench.eval.jsweb     # the proof alone
"""

from __future__ import annotations

import html
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reader.extract import Job, extract
from reader.model import Kind

from bench.eval.harness import SEARX_TIMEOUT_S, Config, World, run_configs
from bench.eval.metrics import Outcome
from bench.eval.questions import Question, load
from tests.conftest import free_port
from tests.offline.searx import Entry, run_searx
from tests.offline.web import Route, serve

QUESTIONS_FILE = Path(__file__).with_name("js-only.yaml")
SET = "js"
# The reader's render setting per configuration: the tier on demand (the default), and off.
RENDER = {"js render on": "on-demand", "js render off": "off"}


@dataclass(frozen=True)
class App:
    """One single-page app: its name, title, meta description and rendered sections."""

    name: str
    title: str
    description: str
    sections: Mapping[str, Sequence[str]]  # heading -> paragraphs

    @property
    def path(self) -> str:
        """Where the shell is served."""
        return f"/{SET}/{self.name}.html"

    def text(self) -> str:
        """The rendered text: what the script writes into the root, as plain text."""
        return "\n\n".join(f"{h}\n\n" + "\n\n".join(ps) for h, ps in self.sections.items())


APPS: tuple[App, ...] = (
    App(
        "kelpie-config",
        "Kelpie backup scheduler: configuration",
        "Configuration reference for the Kelpie backup scheduler: retention, uploads and "
        "snapshot windows.",
        {
            "Retention": [
                "Kelpie keeps every snapshot for 45 days by default; set retention.days to "
                "change it. Snapshots pinned by a hold are never pruned, whatever their age.",
            ],
            "Uploads": [
                "The scheduler runs at most 14 parallel uploads per repository. Each upload "
                "streams chunks of 8 MiB and retries a failed chunk three times.",
            ],
            "Snapshot window": [
                "The default snapshot window opens at 02:10 UTC and closes at 04:30 UTC; "
                "a snapshot still running when it closes is allowed to finish.",
            ],
        },
    ),
    App(
        "marrow-ferry",
        "Marrow Sound ferry: timetable",
        "Live timetable of the Marrow Sound ferry between Veldhaven and Orsund harbour.",
        {
            "Weekdays": [
                "The first ferry leaves Veldhaven at 05:40 on weekdays and the last one "
                "returns from Orsund at 23:15.",
            ],
            "Winter service": [
                "From November to March the crossing takes 48 minutes, because the ferry "
                "keeps to the sheltered channel behind the breakwater.",
            ],
        },
    ),
    App(
        "orsund-library",
        "Orsund public library: borrowing rules",
        "Borrowing rules of the Orsund public library: loans, holds and renewals.",
        {
            "Loans": [
                "Books are lent for four weeks. Board games are lent for 17 days and cannot "
                "be renewed while another member is waiting for them.",
            ],
            "Holds": [
                "A member may place up to 23 holds at once; a hold not collected within a "
                "week goes to the next member on the list.",
            ],
        },
    ),
    App(
        "tessin-api",
        "Tessin weather API: developer guide",
        "Developer guide to the Tessin weather API: authentication, limits and endpoints.",
        {
            "Authentication": [
                "An access token lives for 2700 seconds; request a new one with your client "
                "secret before it expires.",
            ],
            "Limits": [
                "Each client may send 135 requests per minute; over the limit the API answers "
                "429 with a Retry-After header.",
            ],
            "Endpoints": [
                "The list of every weather station, with its coordinates and elevation, is "
                "served at /v3/station-index; readings of one station at /v3/readings.",
            ],
        },
    ),
)


def shell(app: App) -> bytes:
    """The served HTML: a shell whose script fetches the content and renders it."""
    script = (
        f"fetch('/{SET}/{app.name}.json').then(function (r) {{ return r.json(); }})"
        ".then(function (page) { var root = document.getElementById('root');"
        " var html = '<article><h1>' + page.title + '</h1>';"
        " page.sections.forEach(function (s) { html += '<h2>' + s.heading + '</h2>';"
        " s.paragraphs.forEach(function (p) { html += '<p>' + p + '</p>'; }); });"
        " root.innerHTML = html + '</article>'; });"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(app.title)}</title>"
        f"<meta name='description' content='{html.escape(app.description, quote=True)}'>"
        "</head><body><div id='root'></div>"
        "<noscript>You need to enable JavaScript to run this app.</noscript>"
        f"<script>{script}</script></body></html>"
    ).encode()


def content(app: App) -> bytes:
    """The JSON the shell's script fetches."""
    sections = [{"heading": h, "paragraphs": list(ps)} for h, ps in app.sections.items()]
    return json.dumps({"title": app.title, "sections": sections}).encode()


def route() -> Route:
    """The site's route table: each app's shell and its JSON."""
    files = {a.path: shell(a) for a in APPS}
    files |= {f"/{SET}/{a.name}.json": content(a) for a in APPS}
    return files.get


def entries(base_url: str) -> list[Entry]:
    """A rendering engine's index: the rendered text matched, the description shown."""
    return [Entry(base_url + a.path, a.title, a.text(), a.description) for a in APPS]


def questions() -> list[Question]:
    """The JS-only questions (js-only.yaml)."""
    return load([QUESTIONS_FILE])


def check(qs: Sequence[Question]) -> list[str]:
    """What is wrong with the set: every answer must be in its gold app's rendered text, and in
    neither its snippet (the meta description) nor the reader's plain extraction of its shell."""
    problems = []
    apps = {a.path: a for a in APPS}
    for q in qs:
        if q.kind != "deep" or q.set != SET:
            problems.append(f"{q.id}: a JS-only question is deep and asks about /{SET}/")
            continue
        for path in q.gold:
            app = apps.get(path)
            if app is None:
                problems.append(f"{q.id}: no app at {path}")
                continue
            plain = extract(Job(shell(app), Kind.HTML, url="http://127.0.0.1:1" + path)).markdown
            for part in q.parts:
                if not part.found_in(app.text()):
                    problems.append(f"{q.id}: {part.answer!r} is not in {path}'s rendered text")
                for where, text in (("snippet", app.description), ("shell", plain)):
                    if part.found_in(text):
                        problems.append(f"{q.id}: {part.answer!r} is in {path}'s {where}")
    return problems


@contextmanager
def js_world(workdir: Path) -> Iterator[World]:
    """Serve the JS-only site and run searx over it."""
    with serve(route()) as web:
        engine_dir = workdir / "searx"
        engine_dir.mkdir(parents=True, exist_ok=True)
        with run_searx(engine_dir, entries(web.base_url), free_port(), SEARX_TIMEOUT_S) as searx:
            yield World(web, searx, workdir)


def run(
    workdir: Path,
    qs: Sequence[Question],
    *,
    relay: str = "",
    model: str = "fake-model",
    extra_env: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """Every JS-only question with the render tier on, then off (one stack each, speed mode)."""
    outcomes: list[Outcome] = []
    if not qs:
        return outcomes
    problems = check(qs)
    if problems:
        raise RuntimeError("the JS-only set is not proven: " + "; ".join(problems))
    with js_world(workdir / "jsweb") as w:
        for name, render in RENDER.items():
            config = Config(name, None, "relay" if relay else "one_round", mode="speed")
            env = {**(extra_env or {}), "READER_RENDER": render}
            mine = World(w.web, w.searx, w.workdir / render)
            outcomes += run_configs(mine, qs, [config], relay=relay, model=model, extra_env=env)
    return outcomes


def table(outcomes: Sequence[Outcome]) -> str:
    """One row per configuration: passage and page recall, pages read, median time."""
    lines = [f"JS-only pages ({SET}): the answer only exists once JavaScript has run"]
    head = f"{'configuration':16} {'passage recall':>15} {'page recall':>12} {'read':>8}"
    lines += [head + f" {'p50 s':>6}", "-" * (len(head) + 7)]
    for name in dict.fromkeys(o.config for o in outcomes):
        mine = [o for o in outcomes if o.config == name]
        n = len(mine)
        times = sorted(o.duration_ms for o in mine)
        lines.append(
            f"{name:16} {sum(o.passage_hit for o in mine):>11}/{n:<3}"
            f" {sum(o.page_hit for o in mine):>8}/{n:<3} {sum(o.pages_read for o in mine):>8}"
            f" {times[n // 2] / 1000:6.1f}"
        )
    return "\n".join(lines)


def main() -> int:
    """Prove the set; exit 1 on a problem."""
    problems = check(questions())
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(questions())} JS-only questions: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
