"""`quarry index` (and the origin `quarry ask` shows) against a real HTTP server that speaks
the refresh endpoint's NDJSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from quarry_cli import main as cli

from clients.cli.tests.unit.conftest import FakeApi, Script, problem, run_cli
from tests.conftest import free_port

DONE = {
    "root": "/srv/notes",
    "status": "ok",
    "error": None,
    "total": 3,
    "done": 3,
    "added": 2,
    "updated": 0,
    "removed": 1,
    "unchanged": 1,
    "skipped": 4,
    "failed": 0,
    "documents": 3,
}
INDEXED: Script = [
    ("refresh.started", {"root": "/srv/notes", "queued": False}),
    ("progress", {**DONE, "done": 1}),
    ("progress", {**DONE, "done": 2}),
    ("progress", DONE),
    ("refresh.completed", DONE),
]
ASKED: Script = [
    (
        "sources",
        {
            "sources": [
                {"n": 1, "url": "local:/srv/notes/a.md", "title": "A", "origin": "local"},
                {"n": 2, "url": "http://b.example/", "title": "B", "origin": "web"},
            ]
        },
    ),
    ("answer.delta", {"text": "Answer [1]."}),
    ("answer.completed", {"text": "Answer [1].", "cited": [1]}),
    ("run.completed", {"status": "answered"}),
]


@pytest.fixture
def api(fake_api: FakeApi) -> FakeApi:
    """The refresh endpoint, streaming a finished refresh unless a test scripts otherwise."""
    fake_api.script = INDEXED
    return fake_api


def test_index_shows_progress_and_the_counts(api: FakeApi, tmp_path: Path) -> None:
    code, out, err = api.run("index", str(tmp_path))
    assert code == cli.EXIT_OK
    assert "indexing 1/3 files" in err
    assert "[####################] indexing 3/3 files" in err
    assert out.strip() == (
        "/srv/notes: 3 files (2 added, 0 updated, 1 removed, 1 unchanged, 4 skipped, 0 failed); "
        "the corpus holds 3 documents"
    )
    assert [(s.path, s.body) for s in api.seen] == [("/v1/corpus/refresh", {"path": str(tmp_path)})]


def test_index_sends_an_absolute_path(
    api: FakeApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, _ = api.run("index", "notes", "-q")
    assert code == cli.EXIT_OK
    assert api.seen[0].body == {"path": str(tmp_path / "notes")}


def test_index_without_a_path_refreshes_the_servers_folder(api: FakeApi) -> None:
    code, out, _ = api.run("index", "--json")
    assert code == cli.EXIT_OK
    assert api.seen[0].body == {}
    assert json.loads(out)["added"] == 2


def test_index_refused_path_is_a_usage_error(api: FakeApi) -> None:
    refused = {"title": "Path not allowed", "status": 403, "detail": "outside"}
    api.respond = lambda _request: problem(403, refused)
    code, _, err = api.run("index", "/etc")
    assert code == cli.EXIT_USAGE
    assert "outside" in err


def test_index_error_event_and_aborted_runs_exit_1(api: FakeApi) -> None:
    api.script = [("refresh.started", {}), ("error", {"code": "x", "message": "ranker down"})]
    code, _, err = api.run("index")
    assert (code, "ranker down" in err) == (cli.EXIT_FAILED, True)
    aborted = {**DONE, "status": "aborted", "error": "/srv/notes disappeared"}
    api.script = [("refresh.completed", aborted)]
    code, _, err = api.run("index")
    assert code == cli.EXIT_FAILED
    assert "disappeared" in err


def test_index_unreachable_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, err = run_cli(url, "index")
    assert code == cli.EXIT_UNREACHABLE
    assert url in err


def test_ask_marks_each_source_with_its_origin(api: FakeApi) -> None:
    api.script = ASKED
    code, out, _ = api.run("ask", "q")
    assert code == cli.EXIT_OK
    assert "*[1] A (local)\n     local:/srv/notes/a.md" in out
    assert " [2] B (web)" in out


def test_progress_in_a_log_is_one_line_per_five_percent(api: FakeApi) -> None:
    total = {**DONE, "total": 400, "done": 400}
    api.script = [("progress", {**total, "done": d}) for d in range(1, 401)]
    api.script += [("refresh.completed", total)]
    code, _, err = api.run("index")
    assert code == cli.EXIT_OK
    bars = [line for line in err.splitlines() if "indexing" in line]
    assert 20 <= len(bars) <= 21
    assert bars[-1].endswith("indexing 400/400 files…")
