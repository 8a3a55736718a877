"""`quarry index` (and the origin `quarry ask` shows) against a real HTTP server that speaks
the refresh endpoint's NDJSON."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from quarry_cli import main as cli

from tests.conftest import free_port

Script = list[tuple[str, dict[str, Any]]]
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


class _Handler(BaseHTTPRequestHandler):
    script: ClassVar[Script] = INDEXED
    status: ClassVar[int] = 200
    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *_: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "body": body})
        if self.status != 200:
            problem = {"title": "Path not allowed", "status": self.status, "detail": "outside"}
            self._send(self.status, "application/problem+json", json.dumps(problem).encode())
            return
        lines = [
            json.dumps({"seq": i, "type": t, "data": d}) for i, (t, d) in enumerate(self.script)
        ]
        self._send(200, "application/x-ndjson", ("\n".join(lines) + "\n").encode())

    def _send(self, code: int, ctype: str, payload: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    _Handler.seen, _Handler.status, _Handler.script = [], 200, INDEXED
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _run(url: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stderr", err)
        code = cli.main(["--url", url, *args], out=out)
    return code, out.getvalue(), err.getvalue()


def test_index_shows_progress_and_the_counts(api: str, tmp_path: Path) -> None:
    code, out, err = _run(api, "index", str(tmp_path))
    assert code == cli.EXIT_OK
    assert "indexing 1/3 files" in err
    assert "[####################] indexing 3/3 files" in err
    assert out.strip() == (
        "/srv/notes: 3 files (2 added, 0 updated, 1 removed, 1 unchanged, 4 skipped, 0 failed); "
        "the corpus holds 3 documents"
    )
    assert _Handler.seen == [{"path": "/v1/corpus/refresh", "body": {"path": str(tmp_path)}}]


def test_index_sends_an_absolute_path(
    api: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, _ = _run(api, "index", "notes", "-q")
    assert code == cli.EXIT_OK
    assert _Handler.seen[0]["body"] == {"path": str(tmp_path / "notes")}


def test_index_without_a_path_refreshes_the_servers_folder(api: str) -> None:
    code, out, _ = _run(api, "index", "--json")
    assert code == cli.EXIT_OK
    assert _Handler.seen[0]["body"] == {}
    assert json.loads(out)["added"] == 2


def test_index_refused_path_is_a_usage_error(api: str) -> None:
    _Handler.status = 403
    code, _, err = _run(api, "index", "/etc")
    assert code == cli.EXIT_USAGE
    assert "outside" in err


def test_index_error_event_and_aborted_runs_exit_1(api: str) -> None:
    _Handler.script = [("refresh.started", {}), ("error", {"code": "x", "message": "ranker down"})]
    code, _, err = _run(api, "index")
    assert (code, "ranker down" in err) == (cli.EXIT_FAILED, True)
    aborted = {**DONE, "status": "aborted", "error": "/srv/notes disappeared"}
    _Handler.script = [("refresh.completed", aborted)]
    code, _, err = _run(api, "index")
    assert code == cli.EXIT_FAILED
    assert "disappeared" in err


def test_index_unreachable_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, err = _run(url, "index")
    assert code == cli.EXIT_UNREACHABLE
    assert url in err


def test_ask_marks_each_source_with_its_origin(api: str) -> None:
    _Handler.script = ASKED
    code, out, _ = _run(api, "ask", "q")
    assert code == cli.EXIT_OK
    assert "*[1] A (local)\n     local:/srv/notes/a.md" in out
    assert " [2] B (web)" in out


def test_progress_in_a_log_is_one_line_per_five_percent(api: str) -> None:
    total = {**DONE, "total": 400, "done": 400}
    _Handler.script = [("progress", {**total, "done": d}) for d in range(1, 401)]
    _Handler.script += [("refresh.completed", total)]
    code, _, err = _run(api, "index")
    assert code == cli.EXIT_OK
    bars = [line for line in err.splitlines() if "indexing" in line]
    assert 20 <= len(bars) <= 21
    assert bars[-1].endswith("indexing 400/400 files…")
