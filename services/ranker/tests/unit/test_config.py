"""Ranker settings from RANKER_* variables."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from quarry_common.settings import describe_error
from ranker.config import Settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RANKER_PORT", "RANKER_STEM", "RANKER_STOPWORDS", "RANKER_CPU_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)
    s = Settings()
    assert (s.port, s.stem, s.stopwords, s.cpu_concurrency) == (50052, True, True, 2)


def test_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKER_STEM", "false")
    monkeypatch.setenv("RANKER_CPU_CONCURRENCY", "4")
    s = Settings()
    assert s.stem is False
    assert s.cpu_concurrency == 4


def test_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKER_CPU_CONCURRENCY", "0")
    with pytest.raises(ValidationError) as info:
        Settings()
    assert "RANKER_CPU_CONCURRENCY" in describe_error(Settings, info.value)
