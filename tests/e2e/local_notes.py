"""Local notes for the end-to-end tests: facts that exist only in these files, not on the web."""

from __future__ import annotations

from pathlib import Path

# An invented fact that no fixture page mentions, so only the local note can supply it.
OBSERVATORY = (
    "# The Quillon Observatory\n\n"
    "The Quillon Observatory sits on the ridge above Karvik. Its great telescope mirror was "
    "ground by the optician Ilse Varga in 1931 and measures 1.6 metres across.\n\n"
    "The observatory opens to visitors on the first Saturday of each month.\n"
)
FILES = {
    "observatory.md": OBSERVATORY,
    "shopping.txt": "Buy lamp oil, rope and two tins of sardines.\n",
}


def write_notes(folder: Path) -> Path:
    """Write the notes into ``folder``; return it."""
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
