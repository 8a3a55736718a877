"""searxng/settings.yml: JSON output on, limiter off, private, and never a literal secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

SETTINGS = Path(__file__).resolve().parents[2] / "searxng" / "settings.yml"
# SearXNG's placeholder; its container entrypoint replaces it, and a read-only mount cannot be.
PLACEHOLDER_SECRET = "ultrasecretkey"  # noqa: S105 (the placeholder we must never ship)


@pytest.fixture(scope="module")
def settings() -> dict[str, Any]:
    data = yaml.safe_load(SETTINGS.read_text())
    assert isinstance(data, dict)
    return data


def test_json_output_is_enabled(settings: dict[str, Any]) -> None:
    assert "json" in settings["search"]["formats"]


def test_limiter_off_and_not_public(settings: dict[str, Any]) -> None:
    assert settings["server"]["limiter"] is False
    assert settings["server"]["public_instance"] is False


def test_no_literal_secret(settings: dict[str, Any]) -> None:
    assert "secret_key" not in settings.get("server", {})
    assert PLACEHOLDER_SECRET not in SETTINGS.read_text()


def test_inherits_defaults_with_a_short_engine_list(settings: dict[str, Any]) -> None:
    engines = settings["use_default_settings"]["engines"]["keep_only"]
    assert 3 <= len(engines) <= 10
    assert "google" not in engines


def test_every_kept_engine_is_switched_on(settings: dict[str, Any]) -> None:
    kept = settings["use_default_settings"]["engines"]["keep_only"]
    enabled = {e["name"] for e in settings["engines"] if e.get("disabled") is False}
    assert set(kept) == enabled
