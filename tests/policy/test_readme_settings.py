"""Every setting a service reads is documented in a table of the README or a docs/ page
(docs/configuration.md holds the full list)."""

from __future__ import annotations

import fnmatch
import itertools
import re

import pytest
from index.config import Settings as IndexSettings
from orchestrator.config import Settings as OrchestratorSettings
from pydantic_settings import BaseSettings
from quarry_common.settings import env_name
from ranker.config import Settings as RankerSettings
from reader.config import Settings as ReaderSettings

from tests.conftest import ROOT

SETTINGS: tuple[type[BaseSettings], ...] = (
    ReaderSettings,
    RankerSettings,
    IndexSettings,
    OrchestratorSettings,
)
# A table cell's first column: `NAME`, `A_{B,C}_D` (one row for several) or `*_SUFFIX`.
_CELL = re.compile(r"^\|\s*`([A-Z0-9_*{},]+)`", re.MULTILINE)


def _expand(pattern: str) -> list[str]:
    """Expand one level of ``{a,b}`` alternatives per brace group."""
    parts = re.split(r"\{([^}]*)\}", pattern)
    literals, choices = parts[0::2], [p.split(",") for p in parts[1::2]]
    out = []
    for combo in itertools.product(*choices):
        text = literals[0]
        for choice, literal in zip(combo, literals[1:], strict=True):
            text += choice + literal
        out.append(text)
    return out


def doc_text() -> str:
    """README.md and every docs/ page, as one text."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def documented() -> list[str]:
    """Every variable name (or ``*`` pattern) in the docs' tables."""
    return [name for cell in _CELL.findall(doc_text()) for name in _expand(cell)]


def test_expand_handles_brace_groups() -> None:
    assert _expand("X_{A,B}_Y") == ["X_A_Y", "X_B_Y"]
    assert _expand("PLAIN") == ["PLAIN"]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.__module__)
def test_every_setting_is_documented(settings: type[BaseSettings]) -> None:
    names = documented()
    missing = [
        var
        for var in (env_name(settings, (field,)) for field in settings.model_fields)
        if not any(fnmatch.fnmatchcase(var, pattern) for pattern in names)
    ]
    assert not missing, f"add these to docs/configuration.md's table: {missing}"
