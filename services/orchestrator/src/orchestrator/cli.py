"""The `quarry` command line (placeholder until the CLI issue lands)."""

from __future__ import annotations

import sys


def main() -> None:
    """Print usage; the real client arrives with the orchestrator's HTTP API."""
    sys.stderr.write("usage: quarry ask QUESTION  (not available yet)\n")
    raise SystemExit(2)
