"""`make run`'s local-documents defaults: offline, Quarry answers from its own documentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import run
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
