"""Per-domain reading memory: how each tier (fetch, pdf, render) fared per domain, and what to
do next there. Bounded (LRU over domains), kept in memory, saved to a small SQLite file.

Advice, from the recorded outcomes:
* ``render_first``: the last plain reads of the domain all came back empty while its renders
  worked; the render tier is used at once (on-demand mode);
* ``skip_render``: the domain's last renders all failed; it is not rendered for a while;
* back-off: its last reads all timed out; reads fail fast until the back-off ends (doubling,
  capped), then one read is tried again.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Consecutive outcomes that make a habit of a domain.
STREAK = 3
BACKOFF_S = 30.0
BACKOFF_MAX_S = 600.0
# A skipped render tier is tried again after this long.
SKIP_RENDER_S = 600.0
TIERS = ("fetch", "pdf", "render")


@dataclass
class TierRecord:
    """Counts and running means for one tier on one domain."""

    attempts: int = 0
    ok: int = 0
    empty: int = 0
    failed: int = 0
    timeouts: int = 0
    streak: int = 0  # consecutive non-OK outcomes
    empty_streak: int = 0
    timeout_streak: int = 0
    last_status: str = ""
    last_at: float = 0.0
    mean_ms: float = 0.0
    mean_chars: float = 0.0

    def add(self, status: str, ms: float, chars: int, now: float) -> None:
        self.attempts += 1
        self.mean_ms += (ms - self.mean_ms) / self.attempts
        self.mean_chars += (chars - self.mean_chars) / self.attempts
        self.last_status, self.last_at = status, now
        ok, empty, timeout = status == "OK", status == "EMPTY", status == "TIMEOUT"
        self.ok += ok
        self.empty += empty
        self.timeouts += timeout
        self.failed += not (ok or empty or timeout)
        self.streak = 0 if ok else self.streak + 1
        self.empty_streak = self.empty_streak + 1 if empty else 0
        self.timeout_streak = self.timeout_streak + 1 if timeout else 0


@dataclass
class DomainRecord:
    tiers: dict[str, TierRecord] = field(default_factory=dict)
    backoff_until: float = 0.0
    backoff_s: float = 0.0


class DomainMemory:
    """What the reader learned per domain; ``path`` (a SQLite file) or in memory only."""

    def __init__(
        self, size: int, path: Path | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self._size = size
        self._path = path
        self._clock = clock
        self._domains: OrderedDict[str, DomainRecord] = OrderedDict()
        self._dirty = False

    def record(self, domain: str, tier: str, status: str, ms: float, chars: int) -> None:
        """Note one outcome of ``tier`` on ``domain``."""
        if not domain:
            return
        now = self._clock()
        entry = self._touch(domain)
        tier_record = entry.tiers.setdefault(tier, TierRecord())
        tier_record.add(status, ms, chars, now)
        if tier == "fetch":
            if tier_record.timeout_streak >= STREAK:
                entry.backoff_s = min(BACKOFF_MAX_S, max(BACKOFF_S, entry.backoff_s * 2))
                entry.backoff_until = now + entry.backoff_s
            elif status != "TIMEOUT":
                entry.backoff_s, entry.backoff_until = 0.0, 0.0
        self._dirty = True

    def backoff_left(self, domain: str) -> float:
        """Seconds before ``domain`` is read again (0: read it now)."""
        entry = self._domains.get(domain)
        return max(0.0, entry.backoff_until - self._clock()) if entry else 0.0

    def advice(self, domain: str) -> str:
        """ "render_first", "skip_render" or "" for ``domain``."""
        entry = self._domains.get(domain)
        if entry is None:
            return ""
        render = entry.tiers.get("render")
        if (
            render is not None
            and render.streak >= STREAK
            and self._clock() - render.last_at < SKIP_RENDER_S
        ):
            return "skip_render"
        fetch = entry.tiers.get("fetch")
        if fetch is not None and fetch.empty_streak >= STREAK and render and render.ok:
            return "render_first"
        return ""

    def _touch(self, domain: str) -> DomainRecord:
        entry = self._domains.pop(domain, None) or DomainRecord()
        self._domains[domain] = entry
        while len(self._domains) > self._size:
            self._domains.popitem(last=False)
        return entry

    def snapshot(self, limit: int = 0) -> list[tuple[str, DomainRecord, str, float]]:
        """(domain, record, advice, back-off seconds left), most recently used first."""
        rows = []
        for domain in reversed(self._domains):
            entry = self._domains[domain]
            rows.append((domain, entry, self.advice(domain), self.backoff_left(domain)))
            if limit and len(rows) >= limit:
                break
        return rows

    def load(self) -> None:
        """Read the saved memory (a missing or unreadable file starts empty)."""
        if self._path is None or not self._path.exists():
            return
        try:
            with sqlite3.connect(self._path) as db:
                rows = db.execute("SELECT domain, data FROM domains ORDER BY used").fetchall()
        except sqlite3.Error:
            return
        for domain, data in rows[-self._size :]:
            raw = json.loads(data)
            tiers = {name: TierRecord(**values) for name, values in raw["tiers"].items()}
            self._domains[domain] = DomainRecord(tiers, raw["backoff_until"], raw["backoff_s"])

    def save(self) -> None:
        """Write the memory to its file if it changed (blocking: call in a thread)."""
        if self._path is None or not self._dirty:
            return
        self._dirty = False
        rows = [
            (domain, order, json.dumps(asdict(entry)))
            for order, (domain, entry) in enumerate(list(self._domains.items()))
        ]
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(self._path) as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS domains (domain TEXT PRIMARY KEY, used INT, data TEXT)"
            )
            db.execute("DELETE FROM domains")
            db.executemany("INSERT INTO domains VALUES (?, ?, ?)", rows)
