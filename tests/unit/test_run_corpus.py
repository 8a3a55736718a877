"""`make run`'s local-documents defaults (offline, Quarry answers from its own documentation)
and its quiet console (each service's JSON log in a file, a line per warning or error shown)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from scripts import run
from scripts.console import problem_line
from tests.conftest import ROOT


def test_offline_without_corpus_dir_stages_the_project_docs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORPUS_DIR", raising=False)
    monkeypatch.delenv("ORCHESTRATOR_SOURCES", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    env, banner = run.corpus_env(ROOT, tmp_path, search_ok=False)
    staged = tmp_path / "project-docs"
    assert env["CORPUS_DIR"] == str(staged)
    assert env["ORCHESTRATOR_SOURCES"] == "local"
    assert env["ORCHESTRATOR_CORPUS_ALLOW_OUTSIDE"] == "true"
    assert "ORCHESTRATOR_CORPUS_ALLOW_ANY_PATH" not in env  # never index silently
    assert (staged / "README.md").read_bytes() == (ROOT / "README.md").read_bytes()
    assert (staged / "docs" / "api.md").is_file()
    # mtimes are kept, so an unchanged document is not even re-hashed at the next start
    assert (staged / "README.md").stat().st_mtime_ns == (ROOT / "README.md").stat().st_mtime_ns
    assert "own documentation" in banner
    assert "SEARXNG_URL" in banner
    assert "CORPUS_DIR" in banner
    assert "quarry index" in banner


def test_staging_replaces_what_was_there(tmp_path: Path) -> None:
    stale = tmp_path / "project-docs" / "docs" / "removed.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    run.stage_project_docs(ROOT, tmp_path / "project-docs")
    assert not stale.exists()


def test_a_given_corpus_dir_is_used_as_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORPUS_DIR", str(tmp_path / "notes"))
    env, banner = run.corpus_env(ROOT, tmp_path, search_ok=False)
    assert env["CORPUS_DIR"] == str(tmp_path / "notes")
    assert "ORCHESTRATOR_SOURCES" not in env
    assert not (tmp_path / "project-docs").exists()
    assert str(tmp_path / "notes") in banner


def test_with_searxng_reachable_nothing_is_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORPUS_DIR", raising=False)
    env, banner = run.corpus_env(ROOT, tmp_path, search_ok=True)
    assert "CORPUS_DIR" not in env
    assert not (tmp_path / "project-docs").exists()
    assert "quarry index" in banner


def test_a_configured_searxng_that_is_down_is_still_asked_beside_the_docs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORPUS_DIR", raising=False)
    monkeypatch.delenv("ORCHESTRATOR_SOURCES", raising=False)
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9")
    env, _ = run.corpus_env(ROOT, tmp_path, search_ok=False)
    assert env["ORCHESTRATOR_SOURCES"] == "web,local"
    assert env["CORPUS_DIR"] == str(tmp_path / "project-docs")


# --- the quiet console: JSON logs to files, one human line per warning or error ---

_SERVICE = r"""
import json, sys
def log(level, msg, **extra):
    print(json.dumps({"ts": "t", "level": level, "service": "reader", "logger": "reader.pool",
                      "msg": msg, **extra}), flush=True)
log("INFO", "serving", port=1)
log("WARNING", "extraction over its time limit; replacing the worker", limit_s=6.0)
log("ERROR", "read failed unexpectedly", host="x.test", exc="Traceback...\nValueError: bad")
print("reader: READER_PORT must be a number", file=sys.stderr, flush=True)
sys.exit(3)
"""


def _json_lines(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        try:
            if isinstance(json.loads(line.split("| ", 1)[-1]), dict):
                found.append(line)
        except ValueError:
            continue
    return found


def _supervise(tmp_path: Path, console: str) -> tuple[int, str, str]:
    log = tmp_path / "logs" / "reader.log"
    svc = run.Service("reader", [sys.executable, "-c", _SERVICE], log=log, console=console)
    status = asyncio.run(run.supervise([svc], "BANNER\n"))
    return status, log.read_text("utf-8"), str(log)


def test_the_quiet_console_shows_problems_and_the_log_file_keeps_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, logged, path = _supervise(tmp_path, "problems")
    out, err = capsys.readouterr()
    assert status == 1  # a service that exits stops the stack
    assert len(logged.splitlines()) == 4  # three records and the plain line, all kept
    assert len(_json_lines(logged)) == 3
    assert _json_lines(out) == []
    shown = [line.split("| ", 1)[1] for line in out.splitlines()]
    assert shown == [
        "warning: extraction over its time limit; replacing the worker (limit_s=6.0)",
        "error: read failed unexpectedly (host=x.test): ValueError: bad",
        "reader: READER_PORT must be a number",
    ]
    assert "BANNER" in err
    assert "reader exited with status 3; stopping" in err
    assert f"reader's log ({path}) ends with:" in err


def test_verbose_streams_every_line_and_still_writes_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, logged, _ = _supervise(tmp_path, "all")
    out = capsys.readouterr().out
    assert len(_json_lines(out)) == 3
    assert '"msg": "serving"' in out
    assert len(logged.splitlines()) == 4


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ('{"level": "INFO", "msg": "serving"}', None),
        ('{"level": "DEBUG", "msg": "x"}', None),
        ('{"level": "CRITICAL", "msg": "down", "trace_id": "ab"}', "critical: down"),
        ("", None),
        ("[1, 2]", "[1, 2]"),
    ],
)
def test_problem_lines(line: str, shown: str | None) -> None:
    assert problem_line(line) == shown


def test_a_long_value_is_cut_so_one_record_stays_one_line() -> None:
    got = problem_line(json.dumps({"level": "WARNING", "msg": "m", "url": "u" * 200}))
    assert got is not None
    assert got.startswith("warning: m (url=uuu")
    assert got.endswith("…)")
    assert len(got) < 100


def test_verbose_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, verbose in (("1", True), ("true", True), ("", False), ("0", False)):
        monkeypatch.setenv("QUARRY_VERBOSE", value)
        assert run._verbose() is verbose


def test_uploads_go_under_the_data_dir_unless_a_corpus_root_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ORCHESTRATOR_UPLOAD_DIR", raising=False)
    data = tmp_path / ".data"
    assert run.upload_env(data, "") == {
        "ORCHESTRATOR_UPLOAD_DIR": str((data / "uploads").resolve())
    }
    assert run.upload_env(data, str(tmp_path / "notes"))["ORCHESTRATOR_UPLOAD_DIR"]
    # CORPUS_DIR=. would hold the uploads: the orchestrator would refuse to start, so none is set
    assert run.upload_env(data, str(tmp_path)) == {}
    monkeypatch.setenv("ORCHESTRATOR_UPLOAD_DIR", "/srv/uploads")
    assert run.upload_env(data, str(tmp_path)) == {"ORCHESTRATOR_UPLOAD_DIR": "/srv/uploads"}
