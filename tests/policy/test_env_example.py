"""Every variable in .env.example is documented (README.md or docs/), and no secret is filled in."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _entries() -> dict[str, str]:
    entries = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            entries[name.strip()] = value.strip()
    return entries


def test_every_variable_is_documented() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    docs = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    missing = [name for name in _entries() if f"`{name}`" not in docs]
    assert missing == []


def test_secrets_are_left_empty() -> None:
    entries = _entries()
    assert entries["SEARXNG_SECRET"] == ""
    assert entries["LLM_API_KEY"] == ""
    assert entries["ORCHESTRATOR_API_TOKENS"] == ""
