"""searx over the fixture web for end-to-end tests (the engine itself: tests/offline/searx.py).

Each fixture page is indexed and shown by its first 300 characters, like a short summary.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.web import FixtureWeb, Page
from tests.offline import searx as engine
from tests.offline.searx import INSTALL_HINT, searx_available, which_searx

__all__ = ["INSTALL_HINT", "entries", "run_searx", "searx_available", "which_searx"]


def entries(web: FixtureWeb, pages: Sequence[Page]) -> list[engine.Entry]:
    """The index rows of ``pages`` at ``web``'s address."""
    return [engine.Entry(web.url(p), p.title, p.text[:300], p.text[:300]) for p in pages]


@contextmanager
def run_searx(workdir: Path, web: FixtureWeb, pages: Sequence[Page], port: int) -> Iterator[str]:
    """Run searx on ``port`` over ``pages``; yield its base URL."""
    with engine.run_searx(workdir, entries(web, pages), port) as base:
        yield base
