"""The local-documents check both container tests share: one Markdown note in a host folder
(mounted read-only at /corpus), indexed at start, then found by a local-only question."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

NOTE_NAME = "lighthouses.md"
NOTE = (
    "# Lighthouse keepers\n\n"
    "Lighthouse keepers trimmed the lamp wicks every night and wound the clockwork that turned "
    "the lens. Automation replaced the last keepers of British lighthouses in 1998.\n"
)
LOCAL_QUESTION = "when did automation replace the lighthouse keepers?"


def corpus_folder(parent: Path) -> Path:
    """``parent``/corpus holding the note, readable by the containers' uid 10001."""
    folder = parent / "corpus"
    folder.mkdir()
    (folder / NOTE_NAME).write_text(NOTE)
    # pytest makes its folders 0700; the services run as uid 10001, not as the host's user.
    parent.chmod(0o755)
    folder.chmod(0o755)
    (folder / NOTE_NAME).chmod(0o644)
    return folder


def corpus_stats(base_url: str, timeout_s: float = 30.0) -> dict[str, Any]:
    """GET /v1/corpus; a 503 (the index not reachable yet) is retried until ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        reply = httpx.get(f"{base_url}/v1/corpus", timeout=30)
        if reply.status_code != 503 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def wait_indexed(base_url: str, timeout_s: float = 90.0) -> dict[str, Any]:
    """Poll GET /v1/corpus until the start-up refresh has committed at least one document."""
    deadline = time.monotonic() + timeout_s
    while (stats := corpus_stats(base_url))["documents"] < 1 or stats["refreshing"]:
        assert time.monotonic() < deadline, stats
        time.sleep(0.5)
    return stats


def assert_note_indexed(stats: dict[str, Any]) -> None:
    """The start-up refresh of /corpus added the note, and the index committed it."""
    assert stats["corpus_dir"] == "/corpus", stats
    assert stats["documents"] == 1, stats
    assert stats["last_refresh"]["status"] == "ok", stats
    assert stats["last_refresh"]["added"] == 1, stats
    assert stats["committed_at"], stats


def ask_local(base_url: str) -> dict[str, Any]:
    """Ask the note's question from local documents only; assert the note is the cited source."""
    reply = httpx.post(
        f"{base_url}/v1/search",
        json={"query": LOCAL_QUESTION, "options": {"sources": ["local"]}},
        headers={"Accept": "application/json"},
        timeout=120,
    )
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    assert body["status"] == "answered", body
    local = [s for s in body["sources"] if s["origin"] == "local"]
    assert [s["url"] for s in local] == [f"local:/corpus/{NOTE_NAME}"], body
    assert local[0]["n"] in body["cited"], body
    return body
