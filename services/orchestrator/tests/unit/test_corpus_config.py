"""The local-documents settings: defaults, the auto source rule, and bad values refused."""

from __future__ import annotations

import pytest
from orchestrator.config import Settings
from pydantic import ValidationError
from quarry_common.settings import describe_error


def test_auto_sources_follow_what_is_configured() -> None:
    assert Settings().default_sources() == ("web",)
    assert Settings(searxng_url="http://s:8080").default_sources() == ("web",)
    both = Settings(searxng_url="http://s:8080", corpus_dir="/srv/notes")
    assert both.default_sources() == ("web", "local")
    assert Settings(corpus_dir="/srv/notes").default_sources() == ("local",)


def test_explicit_sources() -> None:
    assert Settings(sources="local").default_sources() == ("local",)
    assert Settings(sources="web, local").default_sources() == ("web", "local")
    assert Settings(sources="local,web").default_sources() == ("local", "web")


def test_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORPUS_DIR", "/srv/notes/")
    monkeypatch.setenv("ORCHESTRATOR_SOURCES", "local")
    monkeypatch.setenv("ORCHESTRATOR_CORPUS_RESCAN_S", "300")
    monkeypatch.setenv("ORCHESTRATOR_CORPUS_MAX_FILE_BYTES", "4096")
    monkeypatch.setenv("ORCHESTRATOR_CORPUS_ALLOW_ANY_PATH", "true")
    s = Settings()
    assert s.corpus_dir == "/srv/notes"
    assert (s.sources, s.corpus_rescan_s, s.corpus_max_file_bytes) == ("local", 300.0, 4096)
    assert s.corpus_allow_any_path is True


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("CORPUS_DIR", "relative/notes"),
        ("ORCHESTRATOR_SOURCES", "web,ftp"),
        ("ORCHESTRATOR_SOURCES", "everything"),
        ("ORCHESTRATOR_CORPUS_RESCAN_S", "-1"),
        ("ORCHESTRATOR_CORPUS_MAX_FILE_BYTES", "10"),
        ("ORCHESTRATOR_CORPUS_CONCURRENCY", "0"),
    ],
)
def test_bad_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ValidationError) as err:
        Settings()
    assert describe_error(Settings, err.value).startswith(f"invalid configuration: {env}:")
