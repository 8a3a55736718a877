"""Base settings: env prefix, validation, and the one-line exit-2 error."""

from __future__ import annotations

import pytest
from pydantic import Field
from pydantic_settings import SettingsConfigDict
from quarry_common.settings import EXIT_BAD_CONFIG, BaseServiceSettings, Port, load_settings


class _Demo(BaseServiceSettings):
    model_config = SettingsConfigDict(env_prefix="DEMO_", frozen=True, extra="ignore")
    port: Port = 1234
    upstream: str = Field(default="x", validation_alias="UPSTREAM_ADDR")


def test_defaults_and_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_PORT", "4321")
    monkeypatch.setenv("UPSTREAM_ADDR", "10.0.0.1:1")
    s = load_settings(_Demo)
    assert s.port == 4321
    assert s.upstream == "10.0.0.1:1"
    assert s.log_level == "INFO"


def test_bad_port_exits_2_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEMO_PORT", "eighty")
    with pytest.raises(SystemExit) as exc:
        load_settings(_Demo)
    assert exc.value.code == EXIT_BAD_CONFIG
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "DEMO_PORT" in err
    assert "eighty" in err


def test_out_of_range_port_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_PORT", "70000")
    with pytest.raises(SystemExit):
        load_settings(_Demo)


def test_alias_named_in_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEMO_LOG_LEVEL", "LOUD")
    with pytest.raises(SystemExit):
        load_settings(_Demo)
    assert "DEMO_LOG_LEVEL" in capsys.readouterr().err
