"""The eval tests need the doc sets (sqlite3-doc, git-doc, postfix-doc, zsh-doc, apache2-doc,
ffmpeg-doc) and searx:
fail saying how."""

from __future__ import annotations

import pytest

from bench.eval import docweb
from tests.offline.searx import searx_available


@pytest.fixture(scope="session")
def doc_sets() -> None:
    """Fail (never skip) when the Debian doc sets are not installed."""
    reason = docweb.docs_available()
    if reason:
        pytest.fail(reason)


@pytest.fixture(scope="session")
def searx_installed() -> None:
    """Fail (never skip) when Debian's searx is not installed."""
    reason = searx_available()
    if reason:
        pytest.fail(reason)
