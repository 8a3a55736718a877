"""The history budget: the newest turns that fit, in order; the oldest leave first."""

from __future__ import annotations

from orchestrator.core.ask.memory import fit
from orchestrator.core.sessions import Turn


def turn(q: str, a: str) -> Turn:
    return Turn(q, a, (), "answered", 0.0)


def test_the_oldest_turns_leave_first() -> None:
    history = [turn("q1", "a" * 10), turn("q2", "b" * 10), turn("q3", "c" * 10)]
    memory = fit(history, budget=25)
    assert [t.question for t in memory.kept] == ["q2", "q3"]
    assert memory.event() == {"turns": 3, "kept": 2, "dropped": 1, "chars": 24, "budget": 25}


def test_a_newer_turn_too_big_drops_everything_older_too() -> None:
    history = [turn("q1", "a"), turn("q2", "b" * 100)]
    memory = fit(history, budget=50)
    assert memory.kept == []
    assert memory.dropped == 2


def test_everything_fits() -> None:
    history = [turn("q1", "a"), turn("q2", "b")]
    assert fit(history, budget=48_000).kept == history
