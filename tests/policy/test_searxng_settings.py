"""searxng/settings.yml: JSON output on, limiter off, private, and never a literal secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from orchestrator.core.ask.routing import CATEGORIES
from orchestrator.core.research.dimension import GAP_CATEGORIES, category

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "searxng" / "settings.yml"
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
    assert 3 <= len(engines) <= 20
    assert "google" not in engines


def test_every_kept_engine_is_switched_on(settings: dict[str, Any]) -> None:
    kept = settings["use_default_settings"]["engines"]["keep_only"]
    enabled = {e["name"] for e in settings["engines"] if e.get("disabled") is False}
    assert set(kept) == enabled


def compose_searxng_settings() -> dict[str, Any]:
    """The settings.yml compose mounts into its SearXNG container (read from compose.yaml)."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    volumes = compose["services"]["searxng"]["volumes"]
    (host,) = [v.split(":")[0] for v in volumes if ":/etc/searxng/settings.yml" in v]
    data = yaml.safe_load((ROOT / host).read_text())
    assert isinstance(data, dict)
    return data


def enabled_categories(settings: dict[str, Any]) -> dict[str, list[str]]:
    """Category -> the enabled engines serving it, as SearXNG merges the file: keep_only picks
    upstream engines, and an entry here switches one on and names its categories."""
    kept = set(settings["use_default_settings"]["engines"]["keep_only"])
    served: dict[str, list[str]] = {}
    for engine in settings["engines"]:
        if engine["name"] in kept and engine.get("disabled") is False:
            for cat in engine.get("categories") or []:
                served.setdefault(cat, []).append(engine["name"])
    return served


def test_every_category_the_router_uses_has_an_enabled_engine() -> None:
    served = enabled_categories(compose_searxng_settings())
    # quick search's routing rules, deep research's first iteration and its gap rotation
    asked = {*CATEGORIES, *GAP_CATEGORIES, *(category(i, d) for i in (1, 2, 3) for d in (0, 1))}
    assert {"it", "science", "news", "general"} <= asked
    missing = sorted(c for c in asked if not served.get(c))
    assert missing == [], f"no enabled engine serves {missing} in compose's SearXNG settings"


def test_every_engine_entry_is_kept_and_names_its_categories(settings: dict[str, Any]) -> None:
    kept = set(settings["use_default_settings"]["engines"]["keep_only"])
    for engine in settings["engines"]:
        # an entry keep_only dropped would be added as a new engine without its module
        assert engine["name"] in kept, engine["name"]
        assert engine.get("categories"), f"{engine['name']} names no categories"


def test_wikipedia_articles_are_listed_among_the_results(settings: dict[str, Any]) -> None:
    (wikipedia,) = [e for e in settings["engines"] if e["name"] == "wikipedia"]
    assert wikipedia["disabled"] is False
    # upstream's default is the infobox alone, which Quarry does not read
    assert "list" in wikipedia["display_type"]
