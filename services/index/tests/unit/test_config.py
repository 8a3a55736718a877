"""Index settings: INDEX_* variables, validated at start."""

from __future__ import annotations

import pytest
from index.config import Settings
from pydantic import ValidationError
from quarry_common.settings import describe_error


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("INDEX_PORT", "INDEX_DATA_DIR", "INDEX_DENSE", "INDEX_PASSAGE_WORDS"):
        monkeypatch.delenv(name, raising=False)
    s = Settings()
    assert (s.port, s.data_dir, s.dense, s.passage_words) == (50053, None, True, 120)


def test_data_dir_is_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEX_DATA_DIR", "")
    assert Settings().data_dir is None  # empty means unset: in memory only
    monkeypatch.setenv("INDEX_DATA_DIR", "/data/index")
    assert str(Settings().data_dir) == "/data/index"


@pytest.mark.parametrize(
    ("name", "value"),
    [("INDEX_PASSAGE_WORDS", "8"), ("INDEX_DENSE", "maybe"), ("INDEX_CPU_CONCURRENCY", "0")],
)
def test_bad_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as info:
        Settings()
    assert name in describe_error(Settings, info.value)
