"""`quarry ask`, the installed console script, against the real stack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.e2e.stack import Stack, clean_env
from tests.e2e.web import PAGES, FixtureWeb

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

QUARRY = Path(sys.executable).parent / "quarry"


def quarry(*args: str, url: str, timeout: float = 500) -> subprocess.CompletedProcess[str]:
    """Run the CLI the way a user does (not a TTY: progress is plain lines on stderr)."""
    assert QUARRY.exists(), f"{QUARRY} is missing: run `make setup`"
    return subprocess.run(
        [str(QUARRY), "--url", url, "ask", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(),
        check=False,
    )


def test_ask_streams_the_answer_then_lists_sources(stack: Stack, web: FixtureWeb) -> None:
    done = quarry("What was the Zephyrine Lighthouse's lamp fuel before 1911?", url=stack.api)
    assert done.returncode == 0, done.stderr
    answer, marker, listing = done.stdout.partition("\n\nSources:\n")
    assert marker, done.stdout
    assert answer.strip()
    fixture_urls = {web.url(p) for p in PAGES}
    listed = [line.strip() for line in listing.splitlines() if line.startswith("     ")]
    assert listed
    assert set(listed) <= fixture_urls, listed
    numbered = [line for line in listing.splitlines() if not line.startswith("     ")]
    # " [n] title", or "*[n] title" when the answer cites it
    assert len(numbered) == len(listed)
    assert all(line[1:].startswith(f"[{n}] ") for n, line in enumerate(numbered, 1)), numbered
    progress = done.stderr.splitlines()
    assert any(line.startswith("planning:") or line.startswith("searching:") for line in progress)
    assert any(line.startswith("writing the answer from") for line in progress), done.stderr


def test_ask_json_prints_the_final_result(stack: Stack, web: FixtureWeb) -> None:
    done = quarry("--json", "How long is the Karvik-Holm ferry crossing?", url=stack.api)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "answered", result
    assert result["answer"].strip()
    assert {s["url"] for s in result["sources"]} <= {web.url(p) for p in PAGES}
    assert result["sources"]


def test_unreachable_api_exits_4_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = quarry("anything?", url=url, timeout=60)
    assert done.returncode == 4, (done.returncode, done.stderr)
    assert url in done.stderr
    assert done.stdout == ""
