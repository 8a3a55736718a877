"""What a research run did, call by call, for its bundle: every prompt and model output, every
search and its results, every page read (URL, final URL, content hash, extracted text), every
ranking with its scores, every judge verdict.

The events a run streams stay as they are; this is a separate, bounded record kept by the run
(``Recorder``, at most ``ORCHESTRATOR_BUNDLE_MAX_BYTES``) and saved with the run's state when
the run ends, compressed (``encode``). It records by wrapping the run's collaborators
(``proxies.recording``): the research LLM calls, the Brain (judge, plan), the searcher,
reader, ranker and corpus; nothing in the agent steps changes. Nothing here sees a header, a
key or a token; ``bundle.Scrubber`` removes secrets again before anything leaves.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import orjson

# The share of the cap page texts may fill; the rest keeps room for the model's calls.
PAGES_SHARE = 0.6
_BULKY = ("text", "messages", "evidence", "sources")


def _slim(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` without its bulky fields; each leaves its hash (``<field>_sha256``)."""
    out = {k: v for k, v in entry.items() if k not in _BULKY}
    for key in _BULKY:
        if key in entry:
            out[f"{key}_sha256"] = sha256(orjson.dumps(entry[key], default=str).decode())
    out["omitted"] = [k for k in _BULKY if k in entry]
    return out


class Recorder:
    """A run's call record, capped at ``max_bytes`` of JSON (0: records nothing)."""

    def __init__(
        self,
        max_bytes: int,
        phase: Callable[[], str | None] = lambda: None,
        entries: Sequence[dict[str, Any]] = (),
        dropped: int = 0,
    ) -> None:
        self.max_bytes = max_bytes
        self.entries: list[dict[str, Any]] = list(entries)
        self.size = sum(len(orjson.dumps(e)) for e in self.entries)
        self.dropped = dropped
        self._phase = phase
        self._start = time.monotonic()

    def add(self, kind: str, **data: Any) -> None:
        """Record one call. Page texts stop at ``PAGES_SHARE`` of the cap, so the model's
        outputs (what a replay needs) still fit; past the cap an entry loses its bulky fields
        (page text, prompt: their hashes stay), and only when even that does not fit is it
        dropped, and counted."""
        if self.max_bytes <= 0:
            return
        entry = {
            "i": len(self.entries) + self.dropped,
            "kind": kind,
            "phase": self._phase(),
            "ms": round((time.monotonic() - self._start) * 1000, 1),
            **data,
        }
        raw = orjson.dumps(entry, default=str)
        if kind == "read" and self.size + len(raw) > self.max_bytes * PAGES_SHARE:
            raw = orjson.dumps(_slim(entry), default=str)
        if self.size + len(raw) > self.max_bytes:
            raw = orjson.dumps(_slim(entry), default=str)
        if self.size + len(raw) > self.max_bytes:
            self.dropped += 1
            return
        self.size += len(raw)
        self.entries.append(orjson.loads(raw))

    def encode(self) -> str:
        """The record as one compressed string (kept in the run's state)."""
        head = orjson.dumps({"dropped": self.dropped, "max_bytes": self.max_bytes})
        lines = b"\n".join([head, *(orjson.dumps(e) for e in self.entries)])
        return base64.b64encode(zlib.compress(lines, 6)).decode("ascii")

    @classmethod
    def decode(
        cls, blob: str, max_bytes: int, phase: Callable[[], str | None] = lambda: None
    ) -> Recorder:
        """A recorder holding what ``encode`` wrote (empty for ""); a resumed run adds to it."""
        if not blob:
            return cls(max_bytes, phase)
        try:
            entries = decode_entries(blob)
        except ValueError:  # a damaged record must not stop the run: it starts a new one
            return cls(max_bytes, phase)
        return cls(max_bytes, phase, entries[1:], int(entries[0].get("dropped", 0)))


def decode_entries(blob: str) -> list[dict[str, Any]]:
    """What ``Recorder.encode`` wrote: the head (``dropped``, ``max_bytes``), then the entries.

    Raises:
        ValueError: ``blob`` is not a record.
    """
    try:
        lines = zlib.decompress(base64.b64decode(blob, validate=True)).split(b"\n")
        out = [orjson.loads(line) for line in lines if line]
    except (zlib.error, binascii.Error, orjson.JSONDecodeError) as err:
        raise ValueError(f"not a run record ({err})") from None
    if not out or not all(isinstance(e, dict) for e in out):
        raise ValueError("not a run record")
    return out


def sha256(text: str) -> str:
    """The content hash a bundle gives a page's extracted text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
