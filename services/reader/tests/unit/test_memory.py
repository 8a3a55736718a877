"""The per-domain reading memory: advice from outcomes, the LRU bound, saving and loading."""

from __future__ import annotations

from pathlib import Path

from reader.memory import BACKOFF_S, STREAK, DomainMemory


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_plain_reads_always_empty_where_renders_work_go_straight_to_render() -> None:
    memory = DomainMemory(10)
    for _ in range(STREAK):
        memory.record("spa.example", "fetch", "EMPTY", 20, 0)
    assert memory.advice("spa.example") == ""  # no render has worked there yet
    memory.record("spa.example", "render", "OK", 900, 4000)
    assert memory.advice("spa.example") == "render_first"
    memory.record("spa.example", "fetch", "OK", 20, 3000)
    assert memory.advice("spa.example") == ""


def test_a_render_tier_that_keeps_failing_is_skipped_for_a_while() -> None:
    clock = Clock()
    memory = DomainMemory(10, clock=clock)
    for status in ["TIMEOUT", "CRASHED", "EMPTY"][:STREAK]:
        memory.record("heavy.example", "render", status, 6000, 0)
    assert memory.advice("heavy.example") == "skip_render"
    clock.now += 3600
    assert memory.advice("heavy.example") == ""


def test_a_domain_that_keeps_timing_out_is_backed_off_then_tried_again() -> None:
    clock = Clock()
    memory = DomainMemory(10, clock=clock)
    for _ in range(STREAK - 1):
        memory.record("slow.example", "fetch", "TIMEOUT", 8000, 0)
    assert memory.backoff_left("slow.example") == 0
    memory.record("slow.example", "fetch", "TIMEOUT", 8000, 0)
    assert memory.backoff_left("slow.example") == BACKOFF_S
    clock.now += BACKOFF_S
    assert memory.backoff_left("slow.example") == 0
    memory.record("slow.example", "fetch", "TIMEOUT", 8000, 0)  # still timing out: longer
    assert memory.backoff_left("slow.example") == 2 * BACKOFF_S
    memory.record("slow.example", "fetch", "OK", 300, 5000)
    assert memory.backoff_left("slow.example") == 0


def test_memory_is_bounded_least_recently_used_first() -> None:
    memory = DomainMemory(2)
    memory.record("a.example", "fetch", "OK", 1, 1)
    memory.record("b.example", "fetch", "OK", 1, 1)
    memory.record("a.example", "fetch", "OK", 1, 1)
    memory.record("c.example", "fetch", "OK", 1, 1)
    assert [row[0] for row in memory.snapshot()] == ["c.example", "a.example"]


def test_memory_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "reader" / "domains.sqlite"
    memory = DomainMemory(10, path)
    memory.record("docs.example", "fetch", "EMPTY", 10, 0)
    memory.record("docs.example", "render", "OK", 800, 2500)
    memory.save()
    again = DomainMemory(10, path)
    again.load()
    (domain, entry, _, _), *_ = again.snapshot()
    assert domain == "docs.example"
    assert entry.tiers["render"].ok == 1
    assert entry.tiers["render"].mean_chars == 2500
    assert entry.tiers["fetch"].empty == 1


def test_an_unreadable_file_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "domains.sqlite"
    path.write_bytes(b"not a database")
    memory = DomainMemory(10, path)
    memory.load()
    assert memory.snapshot() == []
